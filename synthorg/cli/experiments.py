"""`synthorg sweep` and `synthorg tune`: many runs of a company, on the local Ray or a cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from synthorg.cli.common import EXIT_MISUSE, console, fail
from synthorg.errors import MisuseError

AddressOpt = Annotated[str | None, typer.Option(
    help="Ray cluster address (`auto` inside a cluster; default: start a local Ray)")]


def _ray(address: str | None) -> None:
    from actors.ray_backend import dashboard_url, ensure_ray
    from synthorg.cli.render import dashboard_hint

    try:
        with console.status("starting Ray" if address is None else f"connecting to {address}"):
            ensure_ray(address, dashboard=True)
    except MisuseError as exc:
        raise fail(str(exc), EXIT_MISUSE) from None
    console.print(dashboard_hint(dashboard_url()))


def sweep(
    experiment: Annotated[Path, typer.Argument(help="experiment YAML (templates/experiments/)")],
    out: Annotated[Path | None, typer.Option(
        help="sweep directory (default out/sweeps/NAME)")] = None,
    address: AddressOpt = None,
    retry_failed: Annotated[bool, typer.Option(
        help="run again the runs that failed (by default a failed run is finished)")] = False,
    quiet: Annotated[bool, typer.Option(help="no progress bar")] = False,
) -> None:
    """Run an experiment: every (point, seed) as a Ray task, rows to DIR/runs.parquet as runs
    finish, mean/sd/95 % interval per point to DIR/aggregate.parquet. Running the same command
    again runs only what is not finished."""
    from actors.ray_backend import started_here as ray_started_here
    from synthorg.experiments.points import plan_runs
    from synthorg.experiments.spec import ExperimentSpec, load_spec
    from synthorg.experiments.sweep import SweepReport
    from synthorg.experiments.sweep import sweep as run_sweep

    try:
        spec = load_spec(experiment, ExperimentSpec)
        assert isinstance(spec, ExperimentSpec)
        runs = plan_runs(spec, experiment)
    except MisuseError as exc:
        raise fail(str(exc), EXIT_MISUSE) from None
    out = out or Path("out") / "sweeps" / spec.name
    _ray(address)
    progress = Progress(TextColumn("[bold]runs"), BarColumn(),
                        TextColumn("{task.fields[counts]}"), TimeElapsedColumn(),
                        console=console, disable=quiet)
    bar = progress.add_task("runs", total=len(runs), counts="")

    def show(r: SweepReport) -> None:
        progress.update(bar, completed=r.skipped + r.done + r.failed,
                        counts=f"done {r.done}  failed {r.failed}  left {r.left}"
                               + (f"  (finished before: {r.skipped})" if r.skipped else ""))

    try:
        with progress:
            report = run_sweep(spec, runs, out, retry_failed=retry_failed, on_change=show,
                               owns_ray=ray_started_here())
    except MisuseError as exc:
        raise fail(str(exc), EXIT_MISUSE) from None
    except KeyboardInterrupt:  # (a second Ctrl-C, or one while Ray went down): rows are kept
        console.print("[yellow]interrupted:[/] runs not finished; the same command runs them",
                      highlight=False)
        raise typer.Exit(130) from None
    for note in report.notes:
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    if report.interrupted:
        console.print(f"[yellow]interrupted:[/] {report.left} runs not finished; the same "
                      "command runs them", highlight=False)
        raise typer.Exit(130)
    console.print(f"{report.planned} runs: {report.done} done, {report.failed} failed, "
                  f"{report.skipped} finished before -> {escape(str(out / 'runs.parquet'))}, "
                  f"{escape(str(out / 'aggregate.parquet'))}", highlight=False)


def tune(
    study_file: Annotated[Path, typer.Argument(help="study YAML (templates/experiments/)")],
    out: Annotated[Path | None, typer.Option(
        help="study directory (default out/studies/NAME)")] = None,
    address: AddressOpt = None,
) -> None:
    """Tune policy parameters with Ray Tune: each trial runs the study's seeds and reports its
    objective as ticks go (ASHA may stop it early); writes DIR/trials.parquet and the best
    config as DIR/best.yaml, which `synthorg run` accepts."""
    from synthorg.experiments.spec import StudySpec, load_spec
    from synthorg.experiments.tune import study

    try:
        spec = load_spec(study_file, StudySpec)
        assert isinstance(spec, StudySpec)
    except MisuseError as exc:
        raise fail(str(exc), EXIT_MISUSE) from None
    out = out or Path("out") / "studies" / spec.name
    _ray(address)
    try:
        with console.status(f"study {spec.name}: trials running (Ray dashboard: Jobs/Actors)"):
            result = study(spec, study_file, out)
    except MisuseError as exc:
        raise fail(str(exc), EXIT_MISUSE) from None
    console.print(f"{result.trials.height} trials -> {escape(str(out / 'trials.parquet'))}; "
                  f"best objective {result.best_objective:.6g} with "
                  f"{escape(str(result.best_params))} -> {escape(str(result.best_config))}",
                  highlight=False)
