"""`synthorg`: run, validate, schema, replay. Exit 0 ok, 2 bad input, 1 failed run."""

from __future__ import annotations

import errno
import json
import os
import signal
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.markup import escape

from synthorg.cli import experiments, report
from synthorg.cli.approvals import approvals_app
from synthorg.cli.common import EXIT_FAILED, EXIT_MISUSE, console, fail, out_console
from synthorg.cli.render import RunProgress, dashboard_hint, summary_table
from synthorg.cli.sandbox import sandbox_app
from synthorg.config.loader import load_config
from synthorg.config.models import CompanyConfig, SimulationSpec
from synthorg.errors import MisuseError
from synthorg.interrupts import forget_half_imported_ray, note_and_interrupt, take_noted
from synthorg.secops.parking import FILE as APPROVALS_FILE

if TYPE_CHECKING:
    from synthorg.llm.cassette import CassetteSpec

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Simulate organisations run by AI agents.")
# the config schema's own limits (simulation.ticks, simulation.seed)
MAX_TICKS = SimulationSpec.model_fields["ticks"].metadata[-1].le
MAX_SEED = SimulationSpec.model_fields["seed"].metadata[-1].le

ConfigArg = Annotated[Path, typer.Argument(help="company config YAML")]
SetOpt = Annotated[list[str] | None, typer.Option(
    "--set", help="override a config value: dotted.path=value (repeatable)")]


def _load(config: Path, overrides: list[str] | None) -> CompanyConfig:
    try:
        return load_config(config, overrides or [])
    except MisuseError as exc:
        raise fail(str(exc), EXIT_MISUSE) from None


def _start_ray(cfg: CompanyConfig, address: str | None) -> None:
    if cfg.runtime.backend != "ray":
        return
    from actors.ray_backend import dashboard_url, ensure_ray

    with console.status("starting Ray" if address is None else f"connecting to Ray at {address}"):
        ensure_ray(address, dashboard=True)
    console.print(dashboard_hint(dashboard_url()))


def _simulate(cfg: CompanyConfig, seed: int | None, ticks: int | None, out: Path,
              address: str | None, mode: str = "run", parent: Path | None = None,
              at_tick: int = 0, overwrite: bool = False, quiet: bool = False,
              approvals_record: Path | None = None,
              cassette: CassetteSpec | None = None) -> object:
    from synthorg.errors import Interrupted
    from synthorg.sim.simulation import Simulation

    if not quiet:
        _start_ray(cfg, address)
    elif cfg.runtime.backend == "ray":
        from actors.ray_backend import ensure_ray

        ensure_ray(address, dashboard=True)
    sim = Simulation(cfg, seed=seed, out=out, address=address, overwrite=overwrite,
                     approvals_record=approvals_record, cassette=cassette)
    if cfg.policies.approvals.mode == "human" and approvals_record is None and not quiet:
        console.print(f"[cyan]approvals:[/] a person decides them; while the run waits, see "
                      f"`synthorg approvals list {escape(str(out))}` (a second Ctrl-C stops "
                      "the run at once; `synthorg resume` finds what waits)", highlight=False)
    total = ticks or cfg.simulation.ticks
    try:
        with RunProgress(console, total, quiet) as progress:
            if mode == "resume":
                return sim.resume(on_tick=progress.update, ticks=ticks)
            if mode == "fork" and parent is not None:
                return sim.fork(parent, at_tick, ticks=ticks, on_tick=progress.update)
            return sim.run(ticks=ticks, on_tick=progress.update)
    except Interrupted as stop:
        console.print(f"[yellow]{escape(str(stop))}[/]")
        raise typer.Exit(130) from None
    except MisuseError as exc:
        raise fail(str(exc), EXIT_MISUSE) from None
    finally:
        for note in sim.notes:
            console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)


def _cassette(cfg: CompanyConfig, record: Path | None, replay: Path | None
              ) -> CassetteSpec | None:
    """The cassette asked for, checked before the run starts (a replayed one is read whole)."""
    if record is None and replay is None:
        return None
    from synthorg.llm.cassette import CassetteSpec
    if record is not None and replay is not None:
        raise fail("--record-cassette and --replay-cassette: one or the other", EXIT_MISUSE)
    if not cfg.llm.enabled:
        raise fail("a cassette keeps the model's replies: it needs llm.enabled", EXIT_MISUSE)
    if replay is not None:
        from synthorg.llm.cassette import load

        try:
            load(replay)
        except MisuseError as exc:
            raise fail(str(exc), EXIT_MISUSE) from None
        return CassetteSpec(replay.resolve(), "replay")
    assert record is not None
    if record.exists():
        raise fail(f"--record-cassette {record}: the file exists (a cassette is recorded "
                   "afresh; remove it first)", EXIT_MISUSE)
    return CassetteSpec(record.resolve(), "record")


@app.command()
def run(
    config: Annotated[Path | None, typer.Argument(
        help="company config YAML (not with --from: a fork takes its parent's)")] = None,
    seed: Annotated[int | None, typer.Option(min=0, max=MAX_SEED,
                                             help="root seed (default: the config's)")] = None,
    ticks: Annotated[int | None, typer.Option(min=1, max=MAX_TICKS,
                                              help="ticks to simulate")] = None,
    out: Annotated[Path | None, typer.Option(help="run directory for outputs")] = None,
    set_: SetOpt = None,
    address: Annotated[str | None, typer.Option(help="Ray cluster address (default: local)")] = None,
    from_: Annotated[Path | None, typer.Option(
        "--from", help="fork: start from another run's checkpoint (with --at-tick)")] = None,
    at_tick: Annotated[int | None, typer.Option(min=0, help="fork at this checkpoint tick")] = None,
    overwrite: Annotated[bool, typer.Option(
        help="replace another run's results found in --out (else refused)")] = False,
    quiet: Annotated[bool, typer.Option(help="no progress bar, dashboard line or table")
                     ] = False,
    json_: Annotated[bool, typer.Option("--json", help="print summary.json to stdout "
                                        "instead of the table (for scripts)")] = False,
    record_cassette: Annotated[Path | None, typer.Option(
        help="LLM mode: keep every request to the model and its reply in this file")] = None,
    replay_cassette: Annotated[Path | None, typer.Option(
        help="LLM mode: answer the model's requests from this file (no server needed)")
    ] = None,
    report_: Annotated[bool, typer.Option(
        "--report", help="write DIR/report.html (`synthorg report`) when the run ends")] = False,
) -> None:
    """Run one simulation and write summary.json, events/tasks/agents parquet.

    With --from DIR --at-tick T (and no CONFIG): a counterfactual fork of DIR at tick T, on
    DIR's resolved config plus --set. Without --out, runs go to out/<config>-seed<N>-<digest
    of the config>, so runs of different --set values do not overwrite each other."""
    if (from_ is None) != (at_tick is None):
        raise fail("--from and --at-tick go together", EXIT_MISUSE)
    if (config is None) == (from_ is None):
        raise fail("give a CONFIG, or --from DIR --at-tick T for a fork (not both)",
                    EXIT_MISUSE)
    if at_tick is not None and ticks is not None and ticks <= at_tick:
        raise fail(f"--ticks ({ticks}) must be more than --at-tick ({at_tick}): a fork "
                    "continues its parent from that tick", EXIT_MISUSE)
    if from_ is not None:
        cfg = _load(from_ / "config.resolved.yaml", set_)
        seed = cfg.simulation.seed if seed is None else seed
        name = f"{from_.resolve().name}-fork{at_tick}"
    else:
        assert config is not None
        cfg = _load(config, set_)
        name = config.stem
    seed_used = cfg.simulation.seed if seed is None else seed
    if out is None:
        from synthorg.sim.simulation import config_digest_of

        digest = config_digest_of(cfg)[:8]
        out = Path("out") / f"{name}-seed{seed_used}-{ticks or cfg.simulation.ticks}t-{digest}"
    if from_ is not None and out.resolve() == from_.resolve():
        raise fail("a fork needs its own --out directory", EXIT_MISUSE)
    result = _simulate(cfg, seed, ticks, out, address, mode="fork" if from_ else "run",
                       parent=from_, at_tick=at_tick or 0, overwrite=overwrite,
                       quiet=quiet or json_,
                       cassette=_cassette(cfg, record_cassette, replay_cassette))
    summary = result.summary  # type: ignore[attr-defined]
    page = None
    if report_:
        from synthorg.report import ReportError, write_report

        try:
            page = write_report(out).path
        except ReportError as exc:  # the run is recorded; only its page failed
            raise fail(f"the run finished, its report did not: {exc}", EXIT_FAILED) from None
    if json_:
        print(json.dumps(summary.model_dump(), indent=2))
    elif not quiet:
        out_console.print(summary_table(summary, out, page))
    if not summary.conservation_ok:
        raise fail("task conservation violated: created != completed + failed + open",
                    EXIT_FAILED)


@app.command()
def resume(
    run_dir: Annotated[Path, typer.Argument(help="an interrupted run directory")],
    address: Annotated[str | None, typer.Option(help="Ray cluster address")] = None,
) -> None:
    """Continue an interrupted run from its last checkpoint."""
    resolved = run_dir / "config.resolved.yaml"
    if not resolved.is_file():
        raise fail(f"{resolved}: not found (is {run_dir} a run directory?)", EXIT_MISUSE)
    cfg = _load(resolved, None)
    result = _simulate(cfg, cfg.simulation.seed, cfg.simulation.ticks, run_dir, address,
                       mode="resume")
    out_console.print(summary_table(result.summary, run_dir))  # type: ignore[attr-defined]


secops_app = typer.Typer(no_args_is_help=True, help="SecOps: check tool calls as a run would.")
app.add_typer(secops_app, name="secops")
app.add_typer(approvals_app, name="approvals")
app.add_typer(sandbox_app, name="sandbox")
app.command()(experiments.sweep)
app.command()(experiments.tune)
app.command()(report.report)
MAX_CALL_LINE = 1 << 20  # bytes of one input line; a longer one is reported, not read in


@secops_app.command("check")
def secops_check(
    config: ConfigArg,
    calls: Annotated[Path, typer.Option("--calls", help="JSON lines: {agent, tool, arguments, "
                                        "task?, workspace?}")],
    set_: SetOpt = None,
) -> None:
    """One verdict per input line, in order: verdict, rule_id, risk_tier, reason. A malformed
    line gets an error line naming its number; the others are still checked (exit 2)."""
    from synthorg.secops.cli import check_lines

    cfg = _load(config, set_)
    try:
        source = calls.open("rb")
    except OSError as exc:
        raise fail(f"{calls}: {exc.strerror or exc}", EXIT_MISUSE) from None
    with source:
        malformed = check_lines(cfg, source, sys.stdout, MAX_CALL_LINE)
    if malformed:
        console.print(f"[bold red]error:[/] {malformed} malformed line(s) in {escape(str(calls))}")
        raise typer.Exit(EXIT_MISUSE)


@secops_app.command("train")
def secops_train(
    corpora: Annotated[list[Path], typer.Argument(help="labelled JSONL files, or folders read "
                                                  "recursively: {tool, arguments, task?, label}")],
    out: Annotated[Path | None, typer.Option(help="weights file to write (default: the one "
                                             "SecOps ships and loads)")] = None,
    c: Annotated[float, typer.Option(min=1e-4, max=1e4, help="inverse strength of the L2 "
                                     "penalty")] = 1.0,
) -> None:
    """Train the second look (a linear model over a call's and its task's words) on labelled
    calls and write its weights."""
    from synthorg.secops.second_look import WEIGHTS, read_corpora, train

    try:
        examples = read_corpora(corpora)
    except OSError as exc:
        raise fail(f"{exc.filename}: {exc.strerror or exc}", EXIT_MISUSE) from None
    except ValueError as exc:
        raise fail(str(exc), EXIT_MISUSE) from None
    if len({e.harmful for e in examples}) < 2:
        raise fail("corpora: need both harmful and benign calls", EXIT_MISUSE)
    model = train(examples, c)
    target = out or WEIGHTS
    try:
        target.write_text(json.dumps(model, sort_keys=True, separators=(",", ":")) + "\n")
    except OSError as exc:
        raise fail(f"{target}: {exc.strerror or exc}", EXIT_MISUSE) from None
    out_console.print(f"[green]ok[/] {target}: {model['trained_on']}")


@app.command()
def validate(config: ConfigArg, set_: SetOpt = None) -> None:
    """Check a config; print what it describes."""
    cfg = _load(config, set_)
    out_console.print(
        f"[green]ok[/] {config}: {cfg.company.name}, {cfg.agent_count()} agents in "
        f"{len(cfg.departments)} departments, {len(cfg.workload.task_types)} task types"
    )


@app.command()
def schema() -> None:
    """Print the JSON Schema of the config."""
    print(json.dumps(CompanyConfig.model_json_schema(), indent=2))


def _fork_of(run_dir: Path) -> tuple[CompanyConfig, int, int] | None:
    """A fork's parent config (checkpointing at the fork tick), fork tick and parent seed;
    None for a run that is not a fork."""
    from synthorg.sim import manifest
    from synthorg.sim.simulation import FORK_FILE, PARENT_CONFIG

    record = run_dir / FORK_FILE
    if not record.is_file():
        return None
    try:
        for f in (record, run_dir / PARENT_CONFIG):
            manifest.verify(f)
        fork = json.loads(record.read_text())
        at_tick, seed = int(fork["at_tick"]), int(fork["parent_seed"])
    except MisuseError as exc:
        raise fail(str(exc), EXIT_MISUSE) from None
    except (OSError, ValueError, KeyError, TypeError):
        raise fail(f"{record}: not a synthorg fork record", EXIT_MISUSE) from None
    every = max(1, at_tick)
    return _load(run_dir / PARENT_CONFIG, [f"runtime.checkpoint_every={every}"]), at_tick, seed


@app.command()
def replay(
    run_dir: Annotated[Path, typer.Argument(help="a run directory written by `synthorg run`")],
    address: Annotated[str | None, typer.Option(help="Ray cluster address")] = None,
    cassette: Annotated[Path | None, typer.Option(
        help="LLM mode: the model's replies recorded with the run (--record-cassette); "
        "without it the model is asked again")] = None,
) -> None:
    """Re-run a run's resolved config and seed; exit 0 if ledger_sha256 matches, 1 if not."""
    from synthorg.sim import manifest

    resolved, summary_file = run_dir / "config.resolved.yaml", run_dir / "summary.json"
    for f in (resolved, summary_file):
        if not f.is_file():
            raise fail(f"{f}: not found (is {run_dir} a run directory?)", EXIT_MISUSE)
        try:
            manifest.verify(f)
        except MisuseError as exc:
            raise fail(str(exc), EXIT_MISUSE) from None
    try:
        recorded = json.loads(summary_file.read_text())
        expected = recorded["ledger_sha256"]
    except (ValueError, KeyError):
        raise fail(f"{summary_file}: not a synthorg summary", EXIT_MISUSE) from None
    cfg = _load(resolved, None)
    replies = _cassette(cfg, None, cassette)
    from synthorg.sim import provenance
    from synthorg.sim.simulation import config_digest_of

    recorded = provenance.read(run_dir)
    with tempfile.TemporaryDirectory(prefix="synthorg-replay-") as tmp:
        fork = _fork_of(run_dir)
        # a person's decisions are given back as they were made (SecOps parks them)
        record = run_dir / APPROVALS_FILE
        record_of = record if cfg.policies.approvals.mode == "human" and record.is_file() else None
        if fork is None:
            result = _simulate(cfg, cfg.simulation.seed, cfg.simulation.ticks, Path(tmp),
                               address, approvals_record=record_of, cassette=replies)
        else:  # the parent up to the fork tick (with a checkpoint there), then the fork
            parent_cfg, at_tick, parent_seed = fork
            _simulate(parent_cfg, parent_seed, at_tick + 1, Path(tmp) / "parent", address,
                      quiet=True)
            result = _simulate(cfg, cfg.simulation.seed, cfg.simulation.ticks,
                               Path(tmp) / "fork", address, mode="fork",
                               parent=Path(tmp) / "parent", at_tick=at_tick)
    got = result.summary.ledger_sha256  # type: ignore[attr-defined]
    now = provenance.current(config_digest_of(cfg))
    why = recorded.differences(now) if recorded is not None else ["no provenance recorded"]
    if got != expected:
        reason = ", ".join(why) if why else "same code and config: a determinism bug"
        out_console.print(f"[red]differs[/]: recorded {expected}, replayed {got} "
                          f"({escape(reason)})")
        raise typer.Exit(EXIT_FAILED)
    note = f" (despite {', '.join(why)})" if why else ""
    out_console.print(f"[green]identical[/]: ledger_sha256 {got}{escape(note)}")


@app.command()
def bench(
    agents: Annotated[str, typer.Option(help="comma-separated company sizes")] = "100,1000,10000",
    ticks: Annotated[int, typer.Option(min=1, help="ticks per throughput run")] = 50,
    backends: Annotated[str, typer.Option(help="comma-separated: ray,local")] = "ray,local",
    memory_agents: Annotated[int, typer.Option(min=0, help="agents for the memory run; 0 skips")
                             ] = 10000,
    memory_ticks: Annotated[int, typer.Option(min=2, help="ticks of the memory run")] = 200,
    repeat: Annotated[int, typer.Option(min=1, help="runs per size and backend; the best "
                                        "counts (a shared machine is noisy)")] = 5,
    address: Annotated[str | None, typer.Option(help="Ray cluster address")] = None,
    facts: Annotated[int, typer.Option(min=0, max=30, help="check every stylised fact on "
                                       "this many seeds instead (0: performance)")] = 0,
    secops: Annotated[bool, typer.Option(help="SecOps instead: fast-path latency and rates, "
                                         "and throughput with threats on and off at the "
                                         "largest --agents size")] = False,
    sandbox: Annotated[bool, typer.Option(help="the tool sandbox instead: cold start, warm "
                                          "run_python latency, calls per second")] = False,
    agent_memory: Annotated[bool, typer.Option(help="long-term memory instead: Mem0 store add "
                                               "and search latency, batched writes, and the "
                                               "enterprise company with Mem0 on (--ticks)")
                            ] = False,
    memory_ab: Annotated[int, typer.Option(min=0, max=100, help="the memory on/off A/B of the "
                                           "default company over this many seeds, 300 ticks")
                         ] = 0,
    careers: Annotated[bool, typer.Option(help="HR instead: one review of 10,000 agents over a "
                                          "200-tick ledger, and megacorp with HR on and off "
                                          "(--ticks)")] = False,
    llm: Annotated[bool, typer.Option(help="LLM mode instead: the model client's concurrency "
                                      "curve against the local server (200 ms, 1..256 in "
                                      "flight) and megacorp with 200 leads reasoning with the "
                                      "model (--ticks)")] = False,
    report_bench: Annotated[bool, typer.Option(
        "--report", help="the HTML report instead: megacorp over --ticks (default 200), "
        "then how long its report takes and its size")] = False,
    sweep: Annotated[int, typer.Option(min=0, max=1000, help="sweeps instead: this many runs "
                                       "of the default company (--ticks, else its own length) "
                                       "as one sweep and as separate `synthorg run` commands")
                     ] = 0,
) -> None:
    """Performance figures as JSON lines: throughput, ray/local ratio, growth, memory. With
    --facts N: one line per stylised fact (effect, 95 % interval, whether it holds). With
    --secops: SecOps's fast path and what threats cost. With --sandbox: the sandbox's. With
    --agent-memory: long-term memory's; --memory-ab N: what memory buys, over N seeds. With
    --llm: LLM mode's concurrency efficiency and a hybrid megacorp. With --sweep N: a sweep's
    runs per minute against separate commands."""
    from synthorg.bench import MEGACORP, memory_flat, throughput

    if report_bench:
        from synthorg.report.bench import report_speed

        print(json.dumps(report_speed(ticks if ticks != 50 else 200)), flush=True)
        return

    if sweep:
        from synthorg.experiments.bench import sweep_speed

        print(json.dumps(sweep_speed(sweep, ticks if ticks != 50 else None)), flush=True)
        return

    if sandbox:
        from sandbox.backend import SandboxUnavailable
        from sandbox.bench import measure

        try:
            print(json.dumps(measure()), flush=True)
        except SandboxUnavailable as exc:
            raise fail(str(exc), EXIT_FAILED) from None
        return

    if llm:
        from synthorg.llm.runbench import client_curve, megacorp_hybrid

        for point in client_curve():
            print(json.dumps(point), flush=True)
        print(json.dumps(megacorp_hybrid(ticks if ticks != 50 else 100,
                                         "ray" if "ray" in backends else "local")), flush=True)
        return

    if careers:
        from synthorg.hr.bench import megacorp_with_hr, review_speed

        print(json.dumps(review_speed()), flush=True)
        print(json.dumps(megacorp_with_hr(ticks if ticks != 50 else 200,
                                          "ray" if "ray" in backends else "local")), flush=True)
        return

    if memory_ab:
        from synthorg.memory.bench import ab

        if memory_ab < 2:
            raise fail("--memory-ab: a confidence interval needs at least 2 seeds", EXIT_MISUSE)
        print(json.dumps(ab(memory_ab)), flush=True)
        return

    if agent_memory:
        from synthorg.memory.bench import ENTERPRISE, company_run, store_speed

        for store in ("mem0", "inprocess"):
            print(json.dumps(store_speed(store)), flush=True)
        print(json.dumps(company_run(ENTERPRISE, ticks if ticks != 50 else 200,
                                     "ray" if "ray" in backends else "local")), flush=True)
        return

    if facts:
        from synthorg.facts import FACTS, Runner

        if facts < 2:
            raise fail("--facts: a confidence interval needs at least 2 seeds", EXIT_MISUSE)
        runner = Runner()
        for fact in FACTS:
            print(json.dumps(runner.check(fact, range(facts)).row()), flush=True)
        return

    try:
        sizes = [int(a) for a in agents.split(",") if a.strip()]
    except ValueError:
        raise fail(f"--agents: expected numbers like 100,1000, got '{agents}'", EXIT_MISUSE) from None
    chosen = [b.strip() for b in backends.split(",") if b.strip()]
    if not sizes or any(n < 1 for n in sizes) or not chosen or set(chosen) - {"ray", "local"}:
        raise fail("--agents needs positive sizes, --backends a subset of ray,local",
                    EXIT_MISUSE)
    if "ray" in chosen:
        from actors.ray_backend import ensure_ray

        ensure_ray(address)
    if secops:
        from synthorg.config.loader import load_config
        from synthorg.secops.bench import fast_path, threats_cost

        base = load_config(MEGACORP)
        print(json.dumps(fast_path(base)), flush=True)
        for row in threats_cost(base, max(sizes), ticks, chosen[0], repeat):
            print(json.dumps(row), flush=True)
        return
    for row in throughput(sizes, ticks, chosen, repeat):
        print(json.dumps(row), flush=True)
    if memory_agents:
        backend = "ray" if "ray" in chosen else "local"
        print(json.dumps(memory_flat(memory_agents, memory_ticks, backend,
                                     warmup=min(50, memory_ticks // 4))), flush=True)


def _typer_took_an_interrupt(exit_: SystemExit) -> bool:
    took = exit_.__context__
    return isinstance(took, typer.Exit) and isinstance(took.__cause__, KeyboardInterrupt)


def _interrupted() -> NoReturn:
    forget_half_imported_ray()
    console.print("[yellow]interrupted[/]")
    sys.exit(130)


def main() -> None:
    debug = bool(os.environ.get("SYNTHORG_DEBUG"))
    # as Ctrl-C during start-up too: exit 130, said so (the run loop has its own handler)
    signal.signal(signal.SIGTERM, note_and_interrupt)
    try:
        app(standalone_mode=True)
    except SystemExit as exc:
        if exc.code == signal.SIGTERM or _typer_took_an_interrupt(exc):
            # Ray's own SIGTERM handler; or a signal typer turned into a silent exit 130
            _interrupted()
        raise
    except MisuseError as exc:
        console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        sys.exit(EXIT_MISUSE)
    except KeyboardInterrupt:
        _interrupted()
    except Exception as exc:
        if take_noted():  # an interrupt Python wrapped (e.g. inside a class body's __set_name__)
            _interrupted()
        if debug:
            raise
        if isinstance(exc, OSError):  # the run directory: full, read-only, not there
            where = f"{exc.filename}: " if exc.filename else ""
            code = EXIT_FAILED if exc.errno in (errno.ENOSPC, errno.EDQUOT) else EXIT_MISUSE
            console.print(f"[bold red]cannot write:[/] {escape(f'{where}{exc.strerror or exc}')}",
                          highlight=False)
            sys.exit(code)
        # a failed run: say what, no traceback
        console.print(f"[bold red]run failed:[/] {type(exc).__name__}: {escape(str(exc))}\n"
                      "(set SYNTHORG_DEBUG=1 for the traceback)", highlight=False)
        sys.exit(EXIT_FAILED)


if __name__ == "__main__":
    main()
