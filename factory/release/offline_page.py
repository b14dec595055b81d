"""The offline page of ``dvc plots show``: ``python -m factory.release.offline_page TARBALL...``
writes ``.dvc/plots/offline.html`` (``plots.html_template`` in ``.dvc/config``) with vega, vega-lite
and vega-embed inlined from their npm tarballs, so the plots need no network
(docs/plots-and-metrics.md)."""

from __future__ import annotations

import argparse
import json
import tarfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from factory.io import write_text_atomic

# The UMD builds DVC's page needs (dvc-render calls the global ``vegaEmbed``), in load order.
VEGA_BUILDS = {
    "vega": "build/vega.min.js",
    "vega-lite": "build/vega-lite.min.js",
    "vega-embed": "build/vega-embed.min.js",
}
OFFLINE_TEMPLATE = Path(".dvc/plots/offline.html")

# dvc-render's page (dvc_render.html.PAGE_HTML) with the scripts inlined instead of its ``{scripts}``
# (the CDN tags): dvc fills ``{plot_divs}`` (and ``{refresh_tag}``) and nothing else.
_PAGE = """<!DOCTYPE html>
<html>
<head>
    {refresh_tag}
    <meta charset="utf-8">
    <title>DVC Plot</title>
    <!-- Written by `python -m factory.release.offline_page` (docs/plots-and-metrics.md): vega, vega-lite and
         vega-embed inlined, so the page works offline. -->
%s
    <style>
        table {
            border-spacing: 15px;
        }
    </style>
</head>
<body>
    {plot_divs}
</body>
</html>
"""


def _package(tarball: Path) -> tuple[str, str, str]:
    """(name, header comment, minified script) of one npm tarball (``npm pack NAME@VERSION``)."""
    with tarfile.open(tarball, "r:gz") as tar:

        def read(member: str) -> str | None:
            try:
                fh = tar.extractfile(f"package/{member}")
            except KeyError:
                return None
            return fh.read().decode("utf-8") if fh else None

        meta = json.loads(read("package.json") or "{}")
        name = meta.get("name", "")
        if name not in VEGA_BUILDS:
            raise ValueError(f"{tarball}: package {name!r} is none of {', '.join(VEGA_BUILDS)}")
        script = read(VEGA_BUILDS[name])
        if script is None:
            raise ValueError(f"{tarball}: no {VEGA_BUILDS[name]}")
        notice = read("LICENSE") or ""
    author = meta.get("author")
    author = author.get("name") if isinstance(author, dict) else author
    header = f"{name} {meta.get('version')}, license {meta.get('license')}" + (
        f", {author}" if author else ""
    )
    if notice:
        header += "\n\n" + notice.strip()
    return name, header.replace("--", "- -"), script


def offline_html_template(tarballs: Iterable[str | Path]) -> str:
    """The ``plots.html_template`` page with vega, vega-lite and vega-embed inlined from their npm
    tarballs (one of each, any order); deterministic for the same tarballs."""
    packages = {name: (header, script) for name, header, script in map(_package, map(Path, tarballs))}
    missing = [n for n in VEGA_BUILDS if n not in packages]
    if missing:
        raise ValueError(f"missing the npm tarball of {', '.join(missing)}")
    blocks = []
    for name in VEGA_BUILDS:
        header, script = packages[name]
        for placeholder in ("{plot_divs}", "{scripts}", "{refresh_tag}"):
            if placeholder in script:
                raise ValueError(f"{name}: the script holds dvc's placeholder {placeholder}")
        script = script.replace("</script", "<\\/script")  # the same JavaScript, and no early end tag
        blocks.append(f"    <!-- {header} -->\n    <script>\n{script.strip()}\n    </script>")
    return _PAGE.replace("%s", "\n".join(blocks), 1)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m factory.release.offline_page",
        description="Write the offline page of `dvc plots show` from the npm tarballs of vega, vega-lite "
        "and vega-embed (`npm pack vega@5 vega-lite@5 vega-embed@6`).",
    )
    parser.add_argument("tarballs", nargs=3, type=Path, metavar="TARBALL")
    parser.add_argument("--out", type=Path, default=OFFLINE_TEMPLATE, help=f"default: {OFFLINE_TEMPLATE}")
    args = parser.parse_args(argv)
    write_text_atomic(args.out, offline_html_template(args.tarballs))


if __name__ == "__main__":
    main()
