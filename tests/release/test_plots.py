"""The release plots: the CSVs have the columns and row order the dvc.yaml definitions and the
templates in .dvc/plots/ need, and `dvc plots show` writes a page that needs no network."""

from __future__ import annotations

import configparser
import csv
import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from factory.release.offline_page import OFFLINE_TEMPLATE, VEGA_BUILDS, offline_html_template
from factory.release.plots import (
    STAGE_UNITS,
    plot_rows,
    trace_length_bins,
    write_plots,
)

REPO = Path(__file__).resolve().parents[2]
PIPELINE = ("synthesize", "inputs", "execute", "trace", "tasks", "difficulty", "assemble")
DVC = str(Path(sys.executable).parent / "dvc")
EXTERNAL_SCRIPT = re.compile(r"<script[^>]*\bsrc\s*=\s*[\"']?\s*(https?:)?//", re.IGNORECASE)


def _summary() -> dict[str, Any]:
    lengths = {2: 24, 3: 384, 4: 859, 5: 846, 9: 94, 40: 7, 1850: 1}
    tier_family = {f"{t}\t{f}": 10 * int(t) for t in ("1", "2", "3") for f in ("white_box", "input")}
    tier_family["3\tcoverage"] = 5
    stages = [
        {"stage": s, "in": 100 - i, "out": 90 - i, "dropped": {"x": 10}} for i, s in enumerate(PIPELINE)
    ]
    return {"tier_family": tier_family, "trace_lengths": lengths, "stages": stages}


def _assemble_plots() -> dict[str, dict[str, Any]]:
    """The plot definitions of the assemble stage in dvc.yaml: CSV path -> properties."""
    stage = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]["assemble"]
    return {path: props for entry in stage["plots"] for path, props in entry.items()}


def _csv(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text())))


def test_the_funnel_lists_the_stages_in_pipeline_order_with_their_units() -> None:
    rows = plot_rows(_summary())["yield_funnel"]
    assert [r["stage"] for r in rows] == list(PIPELINE)
    assert list(rows[0]) == ["stage", "unit", "in", "out"]
    assert [r["unit"] for r in rows] == [STAGE_UNITS[s] for s in PIPELINE]
    assert rows[2] == {"stage": "execute", "unit": "cases", "in": 98, "out": 88}


def test_trace_lengths_are_counted_in_contiguous_bins_two_per_doubling() -> None:
    summary = _summary()
    rows = plot_rows(summary)["trace_length"]
    assert list(rows[0]) == ["bin", "min_length", "max_length", "cases"]
    assert sum(r["cases"] for r in rows) == sum(summary["trace_lengths"].values())
    assert rows[0]["min_length"] == 1 and rows[-1]["min_length"] <= 1850 <= rows[-1]["max_length"]
    for before, after in zip(rows, rows[1:], strict=False):  # no gap: a revision's bins stay in order
        assert after["min_length"] == before["max_length"] + 1
    by_bin = {r["bin"]: r["cases"] for r in rows}
    assert by_bin["2"] == 24 and by_bin["4–5"] == 859 + 846 and by_bin["8–11"] == 94 and by_bin["6–7"] == 0
    assert [lo for lo, _ in trace_length_bins(100)] == [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96]
    assert trace_length_bins(0, bottom=0) == [(0, 1)]


def test_counts_have_every_tier_and_family_with_tiers_in_order() -> None:
    rows = plot_rows(_summary())["counts_by_tier_family"]
    assert list(rows[0]) == ["tier", "family", "items"]
    assert [r["tier"] for r in rows] == sorted(r["tier"] for r in rows)
    assert {(r["tier"], r["family"]) for r in rows} == {
        (t, f) for t in "123" for f in ("coverage", "input", "white_box")
    }
    assert {r["items"] for r in rows if r["family"] == "coverage" and r["tier"] != "3"} == {0}


def test_each_plot_definition_names_a_template_and_columns_its_csv_has(tmp_path: Path) -> None:
    write_plots(tmp_path / "assets", tmp_path / "csv", _summary())
    plots = _assemble_plots()
    assert {Path(p).name for p in plots} == {p.name for p in (tmp_path / "csv").iterdir()}
    for path, props in plots.items():
        header = _csv(tmp_path / "csv" / Path(path).name)[0].keys()
        assert props["x"] in header and props["y"] in header, path
        template = REPO / ".dvc" / "plots" / f"{props['template']}.json"
        spec = json.loads(template.read_text())
        text = json.dumps(spec)
        assert spec["data"] == {"values": "<DVC_METRIC_DATA>"}, template
        assert "<DVC_METRIC_Y>" in text and "http" not in text.replace(spec["$schema"], ""), template
    funnel = json.loads((REPO / ".dvc" / "plots" / "yield_funnel.json").read_text())
    assert funnel["encoding"]["y"]["type"] == "nominal" and funnel["encoding"]["y"]["sort"] is None
    for name in ("bars_in_order", "tier_family_bars"):
        x = json.loads((REPO / ".dvc" / "plots" / f"{name}.json").read_text())["encoding"]["x"]
        assert x["type"] == "ordinal" and x["sort"] is None, name  # categories in the CSV's row order


def test_the_committed_offline_page_inlines_vega_and_is_the_configured_template() -> None:
    config = configparser.ConfigParser()
    config.read(REPO / ".dvc" / "config")
    assert REPO / ".dvc" / config["plots"]["html_template"] == REPO / OFFLINE_TEMPLATE
    page = (REPO / OFFLINE_TEMPLATE).read_text()
    assert "{plot_divs}" in page and "{scripts}" not in page  # {scripts} would bring dvc's CDN tags
    assert not EXTERNAL_SCRIPT.search(page)
    assert page.count("<script>") == 3 and ".vegaEmbed=" in page and ".vegaLite" in page
    for name in VEGA_BUILDS:
        assert f"<!-- {name} " in page


def _tarball(path: Path, name: str, script: str, license_text: str | None = None) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        files = {"package/package.json": json.dumps({"name": name, "version": "1.2.3", "license": "BSD"})}
        files[f"package/{VEGA_BUILDS[name]}"] = script
        if license_text:
            files["package/LICENSE"] = license_text
        for member, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_the_offline_page_is_built_from_the_npm_tarballs(tmp_path: Path) -> None:
    scripts = {"vega": "var vega = 1;", "vega-lite": "var s = '</script>';", "vega-embed": "var vegaEmbed;"}
    tarballs = [_tarball(tmp_path / f"{n}.tgz", n, s, "Copyright -- us") for n, s in scripts.items()]
    page = offline_html_template(reversed(tarballs))
    assert page == offline_html_template(tarballs)  # same bytes, whatever the order given
    assert page.index("var vega = 1") < page.index("var s =") < page.index("var vegaEmbed")
    assert "'<\\/script>'" in page and "Copyright - - us" in page
    assert "{plot_divs}" in page and "{refresh_tag}" in page and not EXTERNAL_SCRIPT.search(page)
    with pytest.raises(ValueError, match="vega-embed"):
        offline_html_template(tarballs[:2])


@pytest.fixture(scope="module")
def dvc_plots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DVC repository with this project's plot config, templates and assemble plot definitions,
    and CSVs from write_plots; ``dvc plots show`` run in it."""
    root = tmp_path_factory.mktemp("dvcrepo")
    subprocess.run([DVC, "init", "--no-scm", "-q"], cwd=root, check=True)
    (root / ".dvc" / "plots").mkdir()
    for path in (REPO / ".dvc" / "plots").iterdir():
        shutil.copy(path, root / ".dvc" / "plots" / path.name)
    with (root / ".dvc" / "config").open("a") as fh:  # the project's [plots] section
        fh.write("[plots]" + (REPO / ".dvc" / "config").read_text().split("[plots]", 1)[1])
    stage = {"cmd": "true", "plots": [{p: props} for p, props in _assemble_plots().items()]}
    (root / "dvc.yaml").write_text(yaml.safe_dump({"stages": {"assemble": stage}}))
    write_plots(root / "assets", root / "data" / "plots" / "assemble", _summary())
    proc = subprocess.run([DVC, "plots", "show"], cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "WARNING" not in proc.stderr and "ERROR" not in proc.stderr, proc.stderr
    return root / "dvc_plots" / "index.html"


def test_dvc_plots_show_writes_a_page_with_no_network_script(dvc_plots: Path) -> None:
    page = dvc_plots.read_text()
    assert not EXTERNAL_SCRIPT.search(page) and "cdn.jsdelivr" not in page
    specs = [json.loads(s) for s in re.findall(r"var spec = (\{.*?\});\n\s*vegaEmbed", page, re.DOTALL)]
    assert len(specs) == 3
    for spec in specs:
        assert "<DVC_METRIC" not in json.dumps(spec)
    funnel = next(s for s in specs if s["title"]["text"] == "Yield per stage")
    assert [row["stage"] for row in funnel["data"]["values"]] == list(PIPELINE)


def test_the_page_renders_offline_in_a_browser(dvc_plots: Path, tmp_path: Path) -> None:
    """Where Chromium is installed (`apt-get install chromium`): every plot becomes a vega view."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("no chromium on this machine")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
             "--disable-background-networking", "--disable-component-update",
             f"--user-data-dir={tmp_path}", "--virtual-time-budget=5000", "--dump-dom"]  # fmt: skip
    proc = subprocess.run([chromium, *flags, dvc_plots.as_uri()], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert dom.count('class="vega-embed') == 3, dom[-2000:]
    assert dom.count("<canvas") + dom.count("<svg") >= 3
