"""The environment every ``node`` of the project runs with, trusted pool and untrusted sandbox alike."""

from __future__ import annotations

#: A fixed time zone and locale (``localeCompare``, ``toLocaleString`` read them).
FIXED_ENV = {"TZ": "UTC", "LC_ALL": "en_US.UTF-8", "LANG": "en_US.UTF-8"}
