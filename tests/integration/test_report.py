"""`synthorg report`: the page of a run, of a sweep and of a fork beside its parent, opened in
headless Chromium with the network off: every figure draws, nothing is fetched, nothing
errs. Bad input exits 2 with one line naming the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import typer
import yaml
from typer.testing import CliRunner

import synthorg
from synthorg.cli.app import app as synthorg_app
from synthorg.cli.report import report as report_command
from synthorg.experiments import rows as store
from synthorg.experiments.points import plan_runs
from synthorg.experiments.spec import ExperimentSpec, load_spec
from synthorg.report import Report, write_report
from synthorg.report.outcomes import KEY_OUTCOMES, load_study
from synthorg.sim.simulation import Simulation
from tests.conftest import STARTUP

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 # no name resolves: a fetch the route below missed could not succeed either
                 "--host-resolver-rules=MAP * ~NOTFOUND"]
FORK_TICK = 60
SWEPT = ("company.autonomy", "policies.approvals.delay_ticks")
MAX_BYTES = 20 * 2**20

# the app registers `report` itself (synthorg/cli/app.py); this one holds only it
cli = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
cli.command()(report_command)
runner = CliRunner()

# per plotly div: its SVG layers, its trace groups and the marks drawn inside them
DRAWN = """() => Array.from(document.querySelectorAll('.js-plotly-plot')).map(d => ({
    id: d.id,
    svgs: d.querySelectorAll('svg.main-svg').length,
    traces: d.querySelectorAll('g.trace').length,
    marks: d.querySelectorAll('g.trace path, g.slice path').length,
    error_bars: d.querySelectorAll('g.errorbar').length,
    first_x: d._fullData.length && d._fullData[0].x ? Number(d._fullData[0].x[0]) : null,
}))"""


@pytest.fixture(scope="module")
def parent(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("report") / "parent"
    cfg = synthorg.load_config(STARTUP, ["runtime.backend=local", "runtime.checkpoint_every=20",
                                         "tools.analyse.executor=null"])
    Simulation(cfg, seed=0, out=out).run(ticks=120)
    return out


@pytest.fixture(scope="module")
def fork(parent) -> Path:
    out = parent.with_name("fork")
    r = runner.invoke(synthorg_app, ["run", "--from", str(parent), "--at-tick", str(FORK_TICK),
                                     "--out", str(out), "--quiet", "--set",
                                     "policies.approvals.approve_probability=0.1"])
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory) -> Path:
    """A sweep directory as `synthorg sweep` writes it (rows, runs.parquet, aggregate.parquet),
    its eight runs made in this process: two parameters x two values x two seeds, short."""
    base = tmp_path_factory.mktemp("sweep")
    spec_file = base / "experiment.yaml"
    spec_file.write_text(yaml.safe_dump({
        "name": "report-test", "base": str(STARTUP),
        "set": {"simulation.ticks": 30, "tools.analyse.executor": None},
        "grid": {SWEPT[0]: ["supervised", "full"], SWEPT[1]: [1, 4]}, "seeds": [0, 1]}))
    spec = load_spec(spec_file, ExperimentSpec)
    assert isinstance(spec, ExperimentSpec)
    runs = plan_runs(spec, spec_file)
    out = base / "sweep"
    rows: list[dict[str, Any]] = []
    with store.owned(out, spec.name, [r.key for r in runs]):
        for run in runs:
            run_dir = out / "runs" / run.key
            summary = Simulation(run.config, seed=run.seed, out=run_dir).run().summary
            rows.append({"run_key": run.key, "point": run.point, "seed": run.seed,
                         "status": "ok", "error": None, "run_dir": str(run_dir),
                         "params": run.params, "summary": summary.model_dump()})
        store.write_tables(out, rows, list(SWEPT))
    return out


@pytest.fixture(scope="module")
def browser(parent, fork, sweep_dir):
    """Chromium, once every run is made: Playwright's sync API holds an event loop on this
    thread while it lives, and a simulation starts its own with asyncio.run."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: `make browser` installs it")
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def open_page(browser, page_file: Path) -> dict[str, Any]:
    """Loads the page with every request that is not the file itself refused, and says what
    each plotly div drew, what was asked of the network and what the console reported."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    refused: list[str] = []

    def only_the_file(route) -> None:
        if route.request.url == page_file.as_uri():
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    context.route("**/*", only_the_file)
    page = context.new_page()
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_file.as_uri(), wait_until="load")
    figures = page.evaluate("() => Number(document.querySelector("
                            "'meta[name=synthorg-figures]')?.content ?? -1)")
    # plotly draws as the page parses; by `load` every inline script has run
    drawn = page.evaluate(DRAWN)
    text = page.inner_text("body")
    context.close()
    return {"figures": figures, "drawn": drawn, "refused": refused, "errors": errors,
            "text": text}


def assert_every_figure_drew(seen: dict[str, Any], made: Report) -> None:
    assert seen["refused"] == [], "the page asked for the network"
    assert seen["errors"] == []
    assert seen["figures"] == len(made.figures) == len(seen["drawn"])
    for div in seen["drawn"]:
        assert div["svgs"] >= 1 and div["traces"] >= 1 and div["marks"] >= 1, div
    assert made.bytes < MAX_BYTES


def test_a_runs_report_draws_every_figure_offline(parent, browser):
    before = {p: p.stat().st_mtime_ns for p in parent.rglob("*")}
    r = runner.invoke(cli, [str(parent)])
    assert r.exit_code == 0, r.output
    page_file = parent / "report.html"
    assert str(page_file) in r.stdout
    # the directory is read, never changed: the page is the one new file
    after = {p: p.stat().st_mtime_ns for p in parent.rglob("*")}
    assert set(after) - set(before) == {page_file}
    assert all(after[p] == t for p, t in before.items())

    made = write_report(parent, out=parent / "again.html")
    assert made.path.read_text() == page_file.read_text()  # the same run, the same page
    assert {"Tasks over time", "Queues and load", "Lead time distribution",
            "Quality distribution", "Cost by department", "Cost by kind", "SecOps verdicts",
            "Security incidents", "Headcount", "HR events", "Org chart"} == set(made.figures)
    seen = open_page(browser, page_file)
    assert_every_figure_drew(seen, made)
    summary = json.loads((parent / "summary.json").read_text())
    for heading in ("Work", "Cost", "Security", "Organisation", "Closing summary",
                    "Departments", summary["ledger_sha256"]):
        assert heading in seen["text"]


def test_a_sweeps_report_has_a_figure_per_outcome_and_parameter(sweep_dir, browser):
    made = write_report(sweep_dir, out=sweep_dir.parent / "sweep.html")
    assert made.kind == "sweep"
    expected = {f"{o} against {p}" for o in KEY_OUTCOMES for p in SWEPT}
    assert set(made.figures) == expected and len(made.figures) == len(expected)
    seen = open_page(browser, made.path)
    assert_every_figure_drew(seen, made)
    # two seeds per point: every point has an interval, drawn as error bars
    assert all(div["error_bars"] >= 1 for div in seen["drawn"])
    aggregate = pl.read_parquet(sweep_dir / "aggregate.parquet")
    assert aggregate.height == 4 and (aggregate["n"] == 2).all()
    assert "8 runs, 8 ok, 0 failed" in seen["text"]


def _study_from(sweep: Path, out: Path) -> pl.DataFrame:
    """A study directory as `synthorg tune` writes it, its trials the sweep's points (objective:
    tasks completed): trials.parquet, and each seed's summary.json under trials/<id>/. The
    last trial stopped early after its first seed, as ASHA stops one."""
    runs = pl.read_parquet(sweep / "runs.parquet")
    trials = []
    for point, rows in runs.sort("point", "seed").group_by("point", maintain_order=True):
        trial_id = f"t_{point[0]:05d}"
        stopped = point[0] == 3
        kept = rows.head(1) if stopped else rows
        for row in kept.iter_rows(named=True):
            seed_dir = out / "trials" / trial_id / f"seed-{row['seed']}"
            seed_dir.mkdir(parents=True)
            shutil.copy(Path(row["run_dir"]) / "summary.json", seed_dir / "summary.json")
        result = {f"{f}.seed{s}": v for s, v in zip(kept["seed"], kept["tasks_completed"],
                                                     strict=True)
                  for f in ("tasks_completed", "objective")}
        trials.append({"trial_id": trial_id, **{p: rows[p][0] for p in SWEPT},
                       "objective": float(kept["tasks_completed"].mean()),
                       "ticks": 30 * kept.height, "seeds_done": kept.height,
                       "stopped_early": stopped, "status": "ok", "error": None,
                       "result": json.dumps(result)})
    frame = pl.DataFrame(trials)
    frame.write_parquet(out / "trials.parquet")
    return frame


def test_a_studys_report_has_its_objective_and_outcomes_per_parameter(sweep_dir, browser,
                                                                      tmp_path):
    trials = _study_from(sweep_dir, tmp_path / "study")
    made = write_report(tmp_path / "study")
    assert made.kind == "study" and made.path == tmp_path / "study" / "report.html"
    expected = {f"{o} against {p}" for o in ("objective", *KEY_OUTCOMES) for p in SWEPT}
    assert set(made.figures) == expected and len(made.figures) == len(expected)
    points = load_study(tmp_path / "study").points.sort("point")
    assert points["objective.mean"].to_list() == pytest.approx(trials["objective"].to_list())
    assert points["n"].to_list() == [2, 2, 2, 1]
    assert points["stopped_early"].to_list() == [False, False, False, True]
    seen = open_page(browser, made.path)
    assert_every_figure_drew(seen, made)
    assert "4 trials, 4 ok (1 stopped early" in seen["text"]


def test_a_fork_is_compared_with_its_parent_from_the_fork_tick(parent, fork, browser):
    out = fork.parent / "compared.html"
    r = runner.invoke(cli, [str(fork), "--compare", str(parent), "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert not (fork / "report.html").exists()
    made = write_report(fork, [parent], out)
    assert made.kind == "compare"
    seen = open_page(browser, out)
    assert_every_figure_drew(seen, made)
    # the time series start at the fork tick: before it the two runs are one
    assert all(div["first_x"] >= FORK_TICK for div in seen["drawn"][:1])
    assert f"From tick {FORK_TICK} on" in seen["text"]
    assert "summary.json side by side" in seen["text"]
    fork_summary = json.loads((fork / "summary.json").read_text())
    parent_summary = json.loads((parent / "summary.json").read_text())
    assert fork_summary["ledger_sha256"] in seen["text"]
    assert parent_summary["ledger_sha256"] in seen["text"]


def test_bad_input_exits_2_with_one_line_naming_the_file(parent, tmp_path):
    damaged = tmp_path / "damaged"
    shutil.copytree(parent, damaged, ignore=shutil.ignore_patterns("checkpoints",
                                                                    "ledger-parts"))
    (damaged / "report.html").unlink(missing_ok=True)
    blob = (damaged / "tasks.parquet").read_bytes()
    (damaged / "tasks.parquet").write_bytes(blob[: len(blob) // 2])
    (tmp_path / "empty").mkdir()
    cases = [
        ([str(tmp_path / "missing")], str(tmp_path / "missing")),
        ([str(tmp_path / "empty")], "not a run, sweep or study directory"),
        ([str(damaged)], str(damaged / "tasks.parquet")),
        ([str(parent), "--compare", str(tmp_path / "empty")], str(tmp_path / "empty")),
    ]
    for args, says in cases:
        r = runner.invoke(cli, args)
        assert r.exit_code == 2, (args, r.output)
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:"), r.output
        assert says in lines[0] and "Traceback" not in r.output
    assert not (damaged / "report.html").exists()
