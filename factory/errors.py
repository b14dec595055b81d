"""The one exception type that means "the user gave bad input" (one line on stderr, exit 2)."""


class UserError(Exception):
    """Bad input from the user: a missing file, a broken grammar, args that are not literals.

    The command line prints ``str(error)`` as one line on stderr and exits with code 2.
    """
