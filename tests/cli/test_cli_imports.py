"""The command line loads a command's module when the command is used, and the HTTP
worker does not load the engine (mftune.cli._groups.LazyGroup, mftune.policies)."""

import importlib
import pkgutil
import subprocess
import sys

import mftune.cli
import mftune.policies
from mftune.cli import bench, main


def test_every_command_is_named_by_its_group_and_found_there():
    for info in pkgutil.iter_modules(mftune.cli.__path__):
        importlib.import_module(f"mftune.cli.{info.name}")  # registers every command
    for group in (main, bench):
        registered = set(group.commands) - {"bench"}
        assert registered == set(group.lazy), group.name
        for name, module in group.lazy.items():
            assert group.get_command(None, name).callback.__module__ == f"mftune.cli.{module}"


def _loaded_after(code: str, modules) -> list[str]:
    probe = (f"import sys\n{code}\n"
             f"print('\\nloaded:', *(m for m in {list(modules)!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    return out.stdout.splitlines()[-1].split()[1:]  # the probe's line, after "loaded:"


HEAVY = ("scipy.stats", "scipy.optimize", "sklearn", "mftune.engine.search",
         "mftune.benchmarks")


def test_the_http_worker_and_the_help_load_neither_the_engine_nor_scipy_s_solvers():
    worker = "import mftune.cli.tune, mftune.cli.serve, mftune.service.worker"
    assert _loaded_after(worker, HEAVY) == []
    helped = ("from mftune.cli import main\n"
              "try:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    assert _loaded_after(helped, HEAVY) == []


def test_a_bench_command_runs_from_a_fresh_process():
    out = subprocess.run([sys.executable, "-m", "mftune", "bench", "lucb-table3", "--help"],
                         capture_output=True, text=True, check=True)
    assert "--runs" in out.stdout


def test_policies_are_found_by_name_and_listed():
    for name in mftune.policies.__all__:
        module = importlib.import_module(f"mftune.policies.{mftune.policies._MODULES[name]}")
        assert getattr(mftune.policies, name) is getattr(module, name)
    assert set(mftune.policies.__all__) <= set(dir(mftune.policies))
    assert "SuccessiveElimination" in mftune.policies.__all__
    try:
        mftune.policies.NoSuchPolicy  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchPolicy" in str(exc)
    else:
        raise AssertionError("an unknown name must raise AttributeError")
