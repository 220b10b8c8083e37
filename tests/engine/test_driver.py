"""The driver loop: stopping conditions, callbacks, failures and parallel batches."""

import time

import numpy as np
import pytest

from mftune.benchmarks.bandits import GaussianBandit
from mftune.benchmarks.simulate import BanditEvaluator
from mftune.engine.driver import Evaluator, Outcome, run
from mftune.policies import IISE, SuccessiveElimination
from mftune.policies.base import Pulls


def _env(seed=0, n_arms=8):
    rng = np.random.default_rng(seed)
    mu = np.sort(rng.normal(size=n_arms))
    theta = np.vstack([mu - 0.3, mu - 0.05, mu])
    return GaussianBandit(theta, [1.0, 3.0, 9.0], xi=[0.31, 0.06, 0.0])


def test_run_to_stopping_rule_matches_fast_path():
    env = _env()
    slow = run(IISE(env.n_arms, env.costs, env.xi, 0.05),
               BanditEvaluator(env, np.random.default_rng(1)), fast=False)
    fast = run(IISE(env.n_arms, env.costs, env.xi, 0.05),
               BanditEvaluator(env, np.random.default_rng(1)), fast=True)
    assert slow.stopping_reason == fast.stopping_reason == "stopping-rule"
    assert slow.completed and slow.recommendation == fast.recommendation
    assert slow.n_pulls == fast.n_pulls
    assert slow.total_cost == pytest.approx(fast.total_cost)
    assert slow.summary.total_cost == pytest.approx(slow.total_cost)


def test_a_policy_done_within_ask_stops_by_its_rule_and_one_asking_nothing_stalls():
    # A search with waves may finish inside ask(): the earlier results that answer a new
    # wave's batch can end it. An empty batch then means the rule holds, not a stall.
    class _DoneInAsk(SuccessiveElimination):
        def __init__(self, *args, finish: bool):
            super().__init__(*args)
            self.finish, self.finished = finish, False

        @property
        def done(self):
            return self.finished or super().done

        def ask(self, n=None):
            if self.n_rounds < 2:
                return super().ask(n)
            self.finished = self.finish  # asks nothing more, done (or not) within ask
            return Pulls.empty()

    env = _env()
    for finish, want in ((True, "stopping-rule"), (False, "stalled")):
        pol = _DoneInAsk(env.n_arms, env.costs, 0.01, finish=finish)
        res = run(pol, BanditEvaluator(env, np.random.default_rng(0)), fast=False)
        assert res.stopping_reason == want and pol.n_rounds == 2


def test_budget_stops_and_trims_the_batch():
    env = _env()
    pol = SuccessiveElimination(env.n_arms, env.costs, 0.01)
    res = run(pol, BanditEvaluator(env, np.random.default_rng(0)), budget=100.0)
    assert res.stopping_reason == "budget"
    # Every pull costs 9; the trimmed last batch keeps the spend below budget + one pull.
    assert 100.0 <= res.total_cost < 100.0 + 9.0
    assert pol.n_pending == 0  # trimmed pulls were cancelled, not left outstanding
    assert 0 <= res.recommendation < env.n_arms


def test_a_batch_is_trimmed_by_the_costs_in_the_budget_s_units():
    # The policy plans in its own units (9 per top pull); the evaluator spends 1 per pull.
    # Priced by pull_costs (the budget's units) the batches run whole until the budget
    # is nearly spent; priced by the policy's units the first batch would be cut to 5.
    class _Cheap(BanditEvaluator):
        def evaluate(self, pulls):
            out = super().evaluate(pulls)
            out.costs = np.ones(len(pulls))
            return out

    env = _env()
    sizes = []
    pol = SuccessiveElimination(env.n_arms, env.costs, 0.01)
    res = run(pol, _Cheap(env, np.random.default_rng(0)), budget=48.0, pull_costs=lambda: [1.0] * 3,
              callbacks=[lambda pulls, *_: sizes.append(len(pulls))])
    assert res.stopping_reason == "budget" and res.total_cost == 48.0
    assert sizes[:5] == [8] * 5 and sizes[-1] == 8  # 6 whole rounds of the 8 arms
    sizes.clear()
    run(SuccessiveElimination(env.n_arms, env.costs, 0.01), _Cheap(env, np.random.default_rng(0)),
        budget=48.0, callbacks=[lambda pulls, *_: sizes.append(len(pulls))])
    assert sizes[0] == 5  # 48 / 9 by the policy's own units


def test_max_pulls_is_exact():
    env = _env()
    res = run(IISE(env.n_arms, env.costs, env.xi, 0.01),
              BanditEvaluator(env, np.random.default_rng(0)), max_pulls=21)
    assert res.stopping_reason == "max-pulls" and res.n_pulls == 21


def test_callbacks_see_every_batch():
    env = _env()
    seen = []
    res = run(IISE(env.n_arms, env.costs, env.xi, 0.05),
              BanditEvaluator(env, np.random.default_rng(0)),
              callbacks=[lambda p, o, pol: seen.append((len(p), o.costs.sum()))])
    assert sum(n for n, _ in seen) == res.n_pulls
    assert sum(c for _, c in seen) == pytest.approx(res.total_cost)


def test_a_callback_returning_true_stops_after_its_batch():
    env = _env()
    sizes = []

    def stop_after_two(pulls, outcomes, policy):
        sizes.append(len(pulls))
        return len(sizes) == 2

    res = run(IISE(env.n_arms, env.costs, env.xi, 0.05),
              BanditEvaluator(env, np.random.default_rng(0)),
              callbacks=[stop_after_two, lambda *_: None])
    assert res.stopping_reason == "callback"
    assert len(sizes) == 2 and res.n_pulls == sum(sizes)


def test_time_budget_stops_between_batches():
    env = _env()

    class _Slow(BanditEvaluator):
        def evaluate(self, pulls):
            time.sleep(0.01)
            return super().evaluate(pulls)

    res = run(SuccessiveElimination(env.n_arms, env.costs, 1e-9),
              _Slow(env, np.random.default_rng(0)), time_budget=0.05)
    assert res.stopping_reason == "time-budget"
    # checked before each batch: at least one batch ran, and the loop ended
    assert res.n_pulls >= 1 and not res.completed


class _Flaky(Evaluator):
    """Fails on arm 0 (recorded with a low score), sleeps for nothing."""

    def __init__(self, env, n_jobs=None):
        super().__init__(n_jobs)
        self.env = env

    def evaluate_one(self, arm, fidelity, point=None):
        if arm == 0:
            return Outcome(reward=-10.0, cost=1.0, status="failed", error="boom")
        mean = self.env.theta[fidelity, arm]
        return Outcome(reward=float(mean), cost=float(self.env.costs[fidelity]))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_failures_are_counted_and_run_goes_on(n_jobs):
    env = _env()
    res = run(IISE(env.n_arms, env.costs, env.xi, 0.05), _Flaky(env, n_jobs), max_pulls=60)
    assert res.n_failed >= 1
    assert res.recommendation != 0


def test_keyboard_interrupt_keeps_what_was_learnt():
    env = _env()

    sizes = []

    class _Interrupting(_Flaky):
        def evaluate(self, pulls):
            sizes.append(len(pulls))
            if len(sizes) == 3:
                raise KeyboardInterrupt
            return super().evaluate(pulls)

    pol = IISE(env.n_arms, env.costs, env.xi, 0.05)
    res = run(pol, _Interrupting(env))
    assert res.stopping_reason == "interrupted"
    assert res.n_pulls == sum(sizes[:2]) == pol.stats.counts.sum()
    assert pol.n_pending == 0  # the interrupted batch was cancelled
    # The search can continue where it stopped.
    again = run(pol, _Flaky(env))
    assert again.stopping_reason == "stopping-rule"
    assert pol.stats.counts.sum() == res.n_pulls + again.n_pulls


@pytest.mark.parametrize(("kw", "match"), [({"budget": 0}, "budget must be > 0"),
                                           ({"max_pulls": 0}, "max_pulls must be a positive"),
                                           ({"time_budget": -1.0}, "time_budget must be > 0")])
def test_invalid_run_arguments(kw, match):
    env = _env()
    with pytest.raises(ValueError, match=match):
        run(IISE(env.n_arms, env.costs, env.xi, 0.05),
            BanditEvaluator(env, np.random.default_rng(0)), **kw)
