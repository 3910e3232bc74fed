"""`synthorg sweep` and `synthorg tune` on the shared Ray instance: rows per (point, seed),
re-runs that complete only what is missing, failures as rows, a study's best config."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest
import yaml
from typer.testing import CliRunner

import synthorg
from synthorg.cli.app import app
from synthorg.experiments.points import plan_runs
from synthorg.experiments.spec import ExperimentSpec, load_spec
from synthorg.sim.simulation import Simulation
from tests.conftest import REPO

pytestmark = pytest.mark.ray
TINY = REPO / "tests" / "data" / "experiments" / "tiny.yaml"
STUDY = REPO / "tests" / "data" / "experiments" / "tiny-study.yaml"


def _experiment(tmp_path: Path, **changes: object) -> Path:
    raw = yaml.safe_load(TINY.read_text())
    raw["base"] = str(REPO / "tests" / "data" / "startup.yaml")
    raw.update(changes)
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _sweep(*args: str) -> object:
    return CliRunner().invoke(app, ["sweep", *map(str, args), "--quiet"])


@pytest.fixture(scope="module")
def swept(ray_session, tmp_path_factory):
    out = tmp_path_factory.mktemp("sweep")
    result = _sweep(TINY, "--out", out)
    assert result.exit_code == 0, result.output
    return out


def test_a_sweep_writes_a_row_per_point_and_seed(swept):
    runs = pl.read_parquet(swept / "runs.parquet")
    assert runs.height == 4
    assert runs["status"].to_list() == ["ok"] * 4
    assert sorted(zip(runs["company.autonomy"], runs["seed"], strict=True)) == [
        ("full", 0), ("full", 1), ("supervised", 0), ("supervised", 1)]
    assert runs["ticks"].to_list() == [40] * 4 and runs["conservation_ok"].all()
    # a row holds the run's own summary: the same run made directly gives the same ledger
    row = runs.filter((pl.col("company.autonomy") == "full") & (pl.col("seed") == 1)).row(
        0, named=True)
    cfg = synthorg.load_config(REPO / "tests" / "data" / "startup.yaml", [
        "simulation.ticks=40", "tools.analyse.executor=null", 'company.autonomy="full"',
        "runtime.backend=local"])
    direct = Simulation(cfg, seed=1, out=swept / "direct").run().summary
    assert row["ledger_sha256"] == direct.ledger_sha256
    assert row["tasks_completed"] == direct.tasks_completed
    assert Path(row["run_dir"], "summary.json").is_file()


def test_the_aggregate_gives_mean_and_interval_per_point(swept):
    runs = pl.read_parquet(swept / "runs.parquet")
    agg = pl.read_parquet(swept / "aggregate.parquet")
    assert agg.height == 2 and agg["n"].to_list() == [2, 2]
    for point in agg.iter_rows(named=True):
        done = runs.filter(pl.col("point") == point["point"])["tasks_completed"]
        assert point["tasks_completed.mean"] == pytest.approx(done.mean())
        assert point["tasks_completed.sd"] == pytest.approx(done.std())
        # two seeds: Student's t with one degree of freedom
        half = 12.706 * done.std() / 2 ** 0.5
        assert point["tasks_completed.ci95_low"] == pytest.approx(done.mean() - half)
        assert point["tasks_completed.ci95_high"] == pytest.approx(done.mean() + half)


def test_running_the_same_sweep_again_runs_nothing(swept):
    before = {p.name: p.read_text() for p in (swept / "rows").glob("*.json")}
    result = _sweep(TINY, "--out", swept)
    assert result.exit_code == 0, result.output
    assert "0 done, 0 failed, 4 finished before" in result.output
    assert {p.name: p.read_text() for p in (swept / "rows").glob("*.json")} == before


def test_an_interrupted_sweep_completes_only_the_missing_runs(ray_session, tmp_path):
    experiment = _experiment(tmp_path, seeds=[0, 1, 2, 3], set={
        "simulation.ticks": 80, "tools.analyse.executor": None})
    out = tmp_path / "sweep"
    exe = str(Path(sys.executable).with_name("synthorg"))
    proc = subprocess.Popen([exe, "sweep", str(experiment), "--out", str(out), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 240
    while not list((out / "rows").glob("*.json")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no run finished"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "the same command runs them" in err
    first = {p.name: p.read_text() for p in (out / "rows").glob("*.json")}
    assert 1 <= len(first) < 8
    # a row file cut short (a crash mid-write, or a crafted one) is not a finished run
    (out / "rows" / "0000000000000000.json").write_text('{"run_key": "00')
    result = _sweep(experiment, "--out", out)
    assert result.exit_code == 0, result.output
    assert f"{8 - len(first)} done, 0 failed, {len(first)} finished before" in result.output, (
        sorted(first), result.output)
    assert "not a finished run of this experiment" in result.output
    runs = pl.read_parquet(out / "runs.parquet")
    assert runs.height == 8 and runs["status"].to_list() == ["ok"] * 8
    for name, text in first.items():  # what the first command finished was left alone
        assert (out / "rows" / name).read_text() == text


def test_a_run_that_fails_is_a_row_with_its_error(ray_session, tmp_path):
    experiment = _experiment(tmp_path)
    spec = load_spec(experiment, ExperimentSpec)
    victim = plan_runs(spec, experiment)[1]  # type: ignore[arg-type]
    out = tmp_path / "sweep"
    (out / "runs").mkdir(parents=True)
    (out / "runs" / victim.key).write_text("a file where the run's directory would go")
    result = _sweep(experiment, "--out", out)
    assert result.exit_code == 0, result.output
    assert "3 done, 1 failed" in result.output
    runs = pl.read_parquet(out / "runs.parquet")
    failed = runs.filter(pl.col("status") == "failed").row(0, named=True)
    assert failed["run_key"] == victim.key and "File exists" in failed["error"]
    assert failed["ledger_sha256"] is None
    # a failed run is finished; --retry-failed runs it again
    assert "0 done, 0 failed, 4 finished before" in _sweep(experiment, "--out", out).output
    (out / "runs" / victim.key).unlink()
    again = _sweep(experiment, "--out", out, "--retry-failed")
    assert "1 done, 0 failed, 3 finished before" in again.output, again.output
    assert pl.read_parquet(out / "runs.parquet")["status"].to_list() == ["ok"] * 4


def test_bad_experiments_exit_2_naming_what_is_wrong(ray_session, tmp_path):
    bad_field = _experiment(tmp_path, grdi={"company.autonomy": ["full"]})
    result = _sweep(bad_field, "--out", tmp_path / "a")
    assert result.exit_code == 2 and "grdi" in result.output, result.output
    bad_value = _experiment(tmp_path, grid={"company.autonomy": ["full", "sometimes"]})
    result = _sweep(bad_value, "--out", tmp_path / "b")
    assert result.exit_code == 2 and "point 1" in result.output
    assert "company.autonomy" in result.output, result.output
    huge = _experiment(tmp_path, grid={"simulation.seed": list(range(1000))},
                       seeds={"count": 1000})
    result = _sweep(huge, "--out", tmp_path / "c")
    assert result.exit_code == 2 and "more than 100,000 runs" in result.output, result.output


def test_a_directory_holds_one_experiment(swept, tmp_path):
    other = _experiment(tmp_path, seeds=[5])
    result = _sweep(other, "--out", swept)
    assert result.exit_code == 2 and "another experiment" in result.output, result.output


def _tune(*args: str) -> object:
    return CliRunner().invoke(app, ["tune", *map(str, args)])


def test_a_small_study_writes_a_best_config_that_run_accepts(ray_session, tmp_path):
    out = tmp_path / "study"
    result = _tune(STUDY, "--out", out)
    assert result.exit_code == 0, result.output
    trials = pl.read_parquet(out / "trials.parquet")
    assert trials.height == 4 and set(trials["status"]) == {"ok"}
    finished = trials.filter(~pl.col("stopped_early"))
    assert finished.height >= 1
    for t in finished.iter_rows(named=True):  # the objective is the mean over the seeds
        per_seed = json.loads(t["result"])
        assert t["objective"] == pytest.approx(
            (per_seed["objective.seed0"] + per_seed["objective.seed1"]) / 2)
        assert t["ticks"] == 80
    stopped = trials.filter(pl.col("stopped_early"))
    assert (stopped["ticks"] < 80).all()
    best = finished.sort("objective", descending=True).row(0, named=True)
    text = (out / "best.yaml").read_text()
    assert f"trial {best['trial_id']}" in text
    cfg = synthorg.load_config(out / "best.yaml")
    assert cfg.company.autonomy == best["company.autonomy"]
    assert cfg.policies.approvals.catch_probability == pytest.approx(
        best["policies.approvals.catch_probability"])
    run = CliRunner().invoke(app, ["run", str(out / "best.yaml"), "--ticks", "10", "--out",
                                   str(tmp_path / "best-run"), "--json"])
    assert run.exit_code == 0, run.output
    assert json.loads(run.output[run.output.index("{"):])["ticks"] == 10


def test_a_studys_objective_is_checked_before_any_trial(ray_session, tmp_path):
    raw = yaml.safe_load(STUDY.read_text())
    raw["base"] = str(REPO / "tests" / "data" / "startup.yaml")
    raw["objective"] = {"maximize": {"tasks_complete": 1}}
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(raw))
    result = _tune(tmp_path / "a.yaml", "--out", tmp_path / "a")
    assert result.exit_code == 2 and "tasks_complete" in result.output, result.output
    raw["objective"] = {"maximize": {"mean_quality": 1}}  # known only when a run ends
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(raw))
    result = _tune(tmp_path / "b.yaml", "--out", tmp_path / "b")
    assert result.exit_code == 2 and "ASHA" in result.output, result.output


def test_a_run_waits_for_its_directory_while_another_process_lets_go(ray_session, tmp_path):
    """A worker of an interrupted sweep may still hold a run's directory when the same
    command starts the run again: the new run waits for it instead of failing."""
    import threading

    from synthorg.experiments.sweep import run_one
    from synthorg.sim.rundir import owned

    cfg = synthorg.load_config(REPO / "tests" / "data" / "startup.yaml", [
        "simulation.ticks=10", "tools.analyse.executor=null", "runtime.backend=local"])
    run_dir = tmp_path / "run"
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with owned(run_dir, fresh=False):
            held.set()
            release.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    threading.Timer(2.0, release.set).start()
    t0 = time.monotonic()
    outcome = run_one(cfg, 0, str(run_dir))
    holder.join()
    assert time.monotonic() - t0 >= 1.5
    assert outcome["summary"]["ticks"] == 10 and outcome["run_dir"] == str(run_dir)
