"""Every ``algorithm=`` name of the tuner: LUCB through ScoreLUCB, the GPs through PointArms."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from mftune import MFTuner, Real
from mftune.benchmarks.bandits import GaussianBandit
from mftune.policies.adapters import ScoreLUCB, lucb_mu_tilde
from mftune.policies.base import Pulls
from mftune.policies.iise import IISEGamma
from mftune.policies.lucb import MultiFidelityLUCB


@pytest.fixture(scope="module")
def data():
    return make_classification(600, 8, n_informative=5, random_state=0)


SPACE = {"C": Real(1e-4, 1e2, log=True)}


def _fit_six(data, algorithm, max_pulls, **kwargs):
    """MFTuner over 6 sampled candidates at 100/399 rows, 3-fold CV."""
    X, y = data
    return MFTuner(LogisticRegression(solver="liblinear"), SPACE, algorithm=algorithm,
                   n_candidates=6, cv=3, fidelities=[100, 399], max_pulls=max_pulls,
                   random_state=0, **kwargs).fit(X, y)


@pytest.mark.parametrize("algorithm", ["lucb-a", "lucb-b", "lucb-c"])
def test_lucb_algorithms_search_the_candidates(data, algorithm):
    t = _fit_six(data, algorithm, 80)
    assert t.algorithm_ == algorithm
    assert len(t.cv_results_["params"]) == 6
    search = np.asarray(t.pulls_["phase"]) == "search"
    assert search.sum() == t.n_pulls_ > 0
    # LUCB pulls the leader and the challenger: at most two candidates per round.
    assert set(np.asarray(t.pulls_["candidate"])[search]) <= set(range(6))
    # The recommendation is a candidate that was pulled.
    assert t.best_index_ in set(np.asarray(t.pulls_["candidate"])[search])


def test_mf_grad_runs_in_the_tuner_with_estimated_bounds(data):
    t = _fit_six(data, "mf-grad", 60)
    assert t.algorithm_ == "mf-grad" and t.n_pulls_ == 60
    pol = t.policy_
    # the tuner's pooled per-fidelity σ and measured costs reached the policy
    assert pol.scale_ is not None and pol.scale_.min() == pytest.approx(1.0)  # σ² = max σ_m²
    assert np.all(np.diff(pol.lam_) > 0) and pol.n_gradients_ > 0
    search = np.asarray(t.pulls_["phase"]) == "search"
    cand = np.asarray(t.pulls_["candidate"])[search]
    fid = np.asarray(t.pulls_["fidelity"])[search]
    # MF-GRAD's initial round: every (candidate, fidelity) pulled
    n_fid = len(pol.costs)
    assert set(zip(cand.tolist(), fid.tolist(), strict=True)) == {(k, m) for k in range(6)
                                                     for m in range(n_fid)}
    assert 0 <= t.best_index_ < 6


@pytest.mark.parametrize("algorithm", ["mf-gp-ucb", "gp-ucb"])
def test_gp_algorithms_propose_new_candidates(data, algorithm):
    X, y = data
    t = MFTuner(LogisticRegression(solver="liblinear"), SPACE, algorithm=algorithm, cv=3,
                fidelities=[100, 399], max_pulls=45, random_state=0).fit(X, y)
    n = len(t.candidates_)
    assert n > t.n_calibration  # configurations proposed by the GP were appended
    assert len(t.cv_results_["params"]) == n
    assert all(1e-4 <= c["C"] <= 1e2 for c in t.candidates_)
    search = np.asarray(t.pulls_["phase"]) == "search"
    arms, fids = np.asarray(t.pulls_["candidate"])[search], np.asarray(t.pulls_["fidelity"])[search]
    # One GP query = every CV split of one new candidate at one fidelity.
    _, per_arm = np.unique(arms, return_counts=True)
    assert np.all(per_arm[:-1] == 3)
    if algorithm == "gp-ucb":
        assert np.all(fids == len(t.fidelities_) - 1)
    assert 0 <= t.best_index_ < n
    again = MFTuner(LogisticRegression(solver="liblinear"), SPACE, algorithm=algorithm, cv=3,
                    fidelities=[100, 399], max_pulls=45, random_state=0,
                    costs="levels").fit(X, y)
    same = MFTuner(LogisticRegression(solver="liblinear"), SPACE, algorithm=algorithm, cv=3,
                   fidelities=[100, 399], max_pulls=45, random_state=0,
                   costs="levels").fit(X, y)
    assert again.candidates_ == same.candidates_  # replayable for a fixed seed


@pytest.mark.parametrize("algorithm", ["mf-gp-ucb", "gp-ucb"])
def test_the_gps_are_told_the_calibration(data, algorithm):
    # the calibration's pulls are evidence: one observation per calibrated candidate and
    # fidelity (the mean of its splits), in the GP's data before its own queries
    X, y = data
    t = MFTuner(LogisticRegression(solver="liblinear"), SPACE, algorithm=algorithm, cv=3,
                fidelities=[100, 399], max_pulls=120, random_state=0).fit(X, y)
    pol, inner = t.policy_, t.policy_.inner
    cal = np.asarray(t.pulls_["phase"]) == "calibration"
    arms = np.asarray(t.pulls_["candidate"])[cal]
    fids = np.asarray(t.pulls_["fidelity"])[cal]
    scores = np.asarray(t.pulls_["score"])[cal]
    groups = sorted(set(zip(arms.tolist(), fids.tolist(), strict=True)))
    assert inner.n_evidence == len(groups) == 2 * t.n_calibration
    e = inner.n_evidence
    assert inner.fidelities_[:e].tolist() == [m for _, m in groups]
    np.testing.assert_allclose(inner.rewards_[:e], [scores[(arms == a) & (fids == m)].mean()
                                                    for a, m in groups])
    np.testing.assert_array_equal(inner.X_[:e],
                                  pol.space.to_unit([t.candidates_[a] for a, _ in groups]))
    # MF-GP-UCB's GPs of the calibrated fidelities were fitted on them too (GP-UCB's one
    # GP is at the top fidelity, which the calibration does not reach here)
    if algorithm == "mf-gp-ucb":
        for m in range(2):
            own = np.sum((inner.status_ == 1) & (inner.fidelities_ == m))
            assert inner.gps_[m].n_obs_ == inner.observations(m)[1].size == e // 2 + own
    # the policy's pulls leave them out
    told = inner.status_ == 1
    assert inner.summary().pulls_per_fidelity.sum() == told.sum() == len(np.unique(
        np.asarray(t.pulls_["candidate"])[~cal])) == pol.stats.counts.sum()


def test_score_lucb_is_wang_lucb_on_rescaled_rewards():
    # With sigma = 1/2 the rescaling is the identity: ScoreLUCB must make exactly the
    # decisions of MultiFidelityLUCB (unclipped, random ties) on the same rewards.
    bandit = GaussianBandit(np.array([[0.3, 0.5, 0.4], [0.35, 0.55, 0.42]]), [1.0, 2.0],
                            sigma=0.1)
    rng = np.random.default_rng(1)
    a = ScoreLUCB(3, [1.0, 2.0], [0.05, 0.0], 0.5, delta=0.1, procedure="C", random_state=3,
                  initial_sweep=False)
    b = MultiFidelityLUCB(3, [1.0, 2.0], [0.05, 0.0], delta=0.1, procedure="C",
                          ties="random", clip=False, random_state=3)
    for _ in range(300):
        pa, pb = a.ask(), b.ask()
        if not len(pa):
            break
        assert np.array_equal(pa.arms, pb.arms) and np.array_equal(pa.fidelities, pb.fidelities)
        r = bandit.pull(pa.arms, pa.fidelities, rng)
        a.tell(pa, r)
        b.tell(pb, r)
    assert a.done == b.done and a.recommend() == b.recommend()


def test_score_lucb_starts_with_one_cheap_pull_of_every_arm():
    # 5 arms, 3 fidelities; the sweep pulls every arm once at fidelity 0, then LUCB's
    # leader and challenger are the two best there (their UCBs share count and bias
    # bound), and EXPLORE-B explores both at every fidelity.
    lucb = ScoreLUCB(5, [1.0, 3.0, 9.0], [0.2, 0.1, 0.0], 0.05, delta=0.1, procedure="B",
                     mu_tilde=(1.0, 0.5), random_state=0)
    first = lucb.ask()
    assert sorted(first.arms.tolist()) == list(range(5)) and set(first.fidelities) == {0}
    # a cancelled sweep pull is asked again before any LUCB round
    keep = first.arms != 4
    lucb.cancel(Pulls(first.arms[~keep], first.fidelities[~keep]))
    scores = np.array([0.70, 0.86, 0.80, 0.88, 0.60])
    lucb.tell(Pulls(first.arms[keep], first.fidelities[keep]), scores[first.arms[keep]])
    again = lucb.ask()
    assert again.arms.tolist() == [4] and again.fidelities.tolist() == [0]
    lucb.tell(again, scores[[4]])
    assert {lucb.ell_, lucb.u_} == {1, 3} and lucb.n_rounds == 0
    round1 = lucb.ask()
    assert set(round1.arms.tolist()) == {1, 3}
    assert sorted(round1.fidelities.tolist()) == [0, 0, 1, 1, 2, 2]


def test_capped_score_lucb_recommends_the_highest_lower_bound():
    # Arm 0 pulled often at the top fidelity with a good mean; arm 1 once, luckily.
    # Arm 1 has the larger UCB (LUCB's leader), arm 0 the larger LCB: before the
    # stopping rule holds, the recommendation is arm 0; once it holds, the leader.
    lucb = ScoreLUCB(3, [1.0, 2.0], [0.05, 0.0], 0.05, delta=0.1, procedure="C",
                     random_state=0)
    arms = np.r_[np.zeros(30, int), 1, 2]
    fids = np.r_[np.ones(31, int), 0]
    scores = np.r_[np.full(30, 0.86), 0.90, 0.50]
    lucb.stats.add(arms, fids, scores * lucb.scale, np.ones(32))  # as tell() would store them
    lucb._select()
    ucb, lcb = lucb.bounds()
    assert not lucb.done and lucb.ell_ == 1 and np.argmax(ucb) == 1 and np.argmax(lcb) == 0
    assert lucb.recommend() == 0
    lucb._stopped = True  # as when LCB_ℓ > UCB_u: the answer is the leader
    assert lucb.recommend() == lucb.ell_


def test_score_lucb_radius_scales_with_sigma_and_epsilon_stops():
    # Rewards r and sigma s give the same bounds, in units of 2s, as rewards r/(2s) with 1/2.
    lucb = ScoreLUCB(2, [1.0], [0.0], 0.01, delta=0.1, procedure="baseline", random_state=0)
    for _ in range(20):
        pulls = lucb.ask()
        lucb.tell(pulls, np.where(pulls.arms == 0, 0.80, 0.79))
    st = lucb.score_stats
    np.testing.assert_allclose(st.means()[0], [0.80, 0.79])
    ucb, lcb = lucb.bounds()
    width = (ucb - lcb) / lucb.scale / 2  # back in score units: 2σ sqrt(log(L t⁴/δ)/n)
    n = st.counts[0]
    expected = 2 * 0.01 * np.sqrt(np.log(lucb.L * n.sum() ** 4 / 0.1) / n)
    np.testing.assert_allclose(width, expected)
    # The two arms are 0.01 apart, well inside the radii: the ε = 0 rule cannot stop,
    # a relaxed rule with ε = 0.5 (larger than both widths) must.
    assert not lucb.done
    lucb.epsilon = 0.5
    lucb._select()
    assert lucb.done


def test_lucb_mu_tilde_bounds():
    mu1, mu2 = lucb_mu_tilde([0.7, 0.8, 0.75], 0.02, 0.01, upper=1.0)
    assert mu1 == 1.0 and mu2 == pytest.approx(0.75 - 0.03)
    mu1, mu2 = lucb_mu_tilde([0.7, 0.8], 0.0, 0.0, upper=None)
    assert mu1 > 0.8 > mu2
    with pytest.raises(ValueError, match="sigma"):
        ScoreLUCB(2, [1.0, 2.0], [0.1, 0.0], 0.0)
    with pytest.raises(ValueError, match="mu_tilde"):
        ScoreLUCB(2, [1.0, 2.0], [0.1, 0.0], 0.1, procedure="A")


def _batches(tuner) -> int:
    """The search's batches in the anytime trace (the calibration's entries have 0 pulls)."""
    return sum(pulls > 0 for _, _, pulls, _ in tuner.history_)


@pytest.mark.parametrize("algorithm", ["iise", "iise-gamma", "se"])
def test_tuner_elimination_uses_its_switches_and_the_cli_does_not(data, algorithm):
    # The tuner's bounds are estimated (wide), so its IISE / IISE-gamma leave a
    # fidelity once nothing can be eliminated there; studies of the command line
    # rebuild the papers' rule (stored studies replay exactly).
    from mftune.policies.registry import policy_from_settings as make_policy
    from mftune.search.storage import study_signature

    X, y = data
    t = _fit_six(data, algorithm, 60)
    on = algorithm != "se"
    assert t.policy_.futility_switch is on
    assert ("futility_switch" in study_signature(t, X, y, None)) is on
    # the cost balance likewise (TUNER_COST_BALANCE rounds of the next fidelity, or
    # TUNER_WAVE_COST_BALANCE in the exploring waves of a search with waves)
    from mftune.policies.registry import TUNER_COST_BALANCE, TUNER_WAVE_COST_BALANCE

    balance = TUNER_WAVE_COST_BALANCE if t.adaptive_ else TUNER_COST_BALANCE
    assert t.policy_.cost_balance == (balance if on else None)
    assert study_signature(t, X, y, None).get("cost_balance") == (balance if on else None)
    settings = {"costs": [1.0, 4.0], "sigma": 0.1, "delta": 0.05, "epsilon": None,
                "xi": [0.2, 0.0], "gamma": [0.2, 0.0]}
    assert make_policy(algorithm, 6, settings).futility_switch is False
    assert make_policy(algorithm, 6, settings).cost_balance is None
    if on:  # a tuner study stores the switches, so `mftune status` replays them
        on_settings = {**settings, "futility_switch": True, "cost_balance": 1.0}
        assert make_policy(algorithm, 6, on_settings).futility_switch is True
        assert make_policy(algorithm, 6, on_settings).cost_balance == 1.0
    # best-first rounds: handed out TUNER_CHUNK_SECONDS of pulls per worker at a time
    assert t.policy_.best_first is on
    assert make_policy(algorithm, 6, settings).best_first is False
    sig = study_signature(t, X, y, None)
    assert sig.get("best_first", False) is on and ("batch_size" in sig) is on
    if on:
        from mftune.policies.registry import TUNER_CHUNK_SECONDS

        assert t.policy_.chunk_cost == TUNER_CHUNK_SECONDS
        phase = np.asarray(t.pulls_["phase"])
        # the calibration's results count in the anytime recommendation
        assert t.policy_.evidence_.counts.sum() == sum(phase == "calibration") > 0
        # these pulls take milliseconds: a second's worth is a whole round, so there
        # are fewer batches than pulls; without the chunk cost, one batch per pull
        assert _batches(t) < sum(phase == "search")
        single = _fit_six(data, algorithm, 60, algorithm_params={"chunk_cost": None})
        assert _batches(single) == sum(np.asarray(single.pulls_["phase"]) == "search")


def test_algorithm_params_reach_the_policy(data, tmp_path):
    # GP options the tuner does not set itself (here: one length scale per dimension)
    X, y = data
    gp = MFTuner(LogisticRegression(solver="liblinear"), SPACE, algorithm="gp-ucb",
                 algorithm_params={"ard": True, "n_init": 3}, n_candidates=6, cv=3,
                 fidelities=[100, 399], max_pulls=15, random_state=0).fit(X, y)
    assert gp.policy_.inner.gp_.ard is True and gp.policy_.inner.n_init == 3
    # the papers' phase rule for the tuner's IISE-gamma, stored with the study and
    # replayed by `mftune status` (policies/registry.py)
    from mftune.policies.registry import policy_from_settings as make_policy
    from mftune.study.store import StudyStore

    path = tmp_path / "s.db"
    t = MFTuner(LogisticRegression(solver="liblinear"), SPACE, algorithm="iise-gamma",
                algorithm_params={"futility_switch": False}, n_candidates=6, cv=3,
                fidelities=[100, 399], max_pulls=30, costs="levels", random_state=0,
                storage=str(path)).fit(X, y)
    assert t.policy_.futility_switch is False
    with StudyStore(path) as store:
        settings = store.meta["settings"]
    assert settings["algorithm_params"] == {"futility_switch": False}
    assert make_policy("iise-gamma", 6, settings).futility_switch is False
    # a study written with other options is refused by name
    with pytest.raises(ValueError, match="algorithm_params"):
        MFTuner(LogisticRegression(solver="liblinear"), SPACE, algorithm="iise-gamma",
                n_candidates=6, cv=3, fidelities=[100, 399], max_pulls=30, costs="levels",
                random_state=0, storage=str(path)).fit(X, y)


def test_best_first_batches_take_the_decisions_of_whole_rounds(data, tmp_path):
    # The tuner updates sigma, costs and bias bounds only between rounds, so a
    # best-first search (here one pull per batch) makes exactly the pulls and
    # eliminations of whole rounds; fixed costs make both runs deterministic.
    from mftune.study.store import StudyStore

    kw = dict(costs="levels", epsilon=0.05)
    path = tmp_path / "s.db"
    one = _fit_six(data, "iise-gamma", 2000, algorithm_params={"chunk_cost": None},
                   storage=str(path), adaptive=False, **kw)
    with StudyStore(path) as store:  # one stored update per closed round, none mid-round
        updated = [b for b in store.updates() if b >= 1]
        batches = {r.batch for r in store.rows() if r.kind == "policy"}
    assert len(updated) == one.policy_.n_rounds < len(batches)
    whole = _fit_six(data, "iise-gamma", 2000, algorithm_params={"best_first": False},
                     adaptive=False, **kw)
    assert one.stopping_reason_ == whole.stopping_reason_ == "stopping-rule"

    def made(t):
        p = t.pulls_
        return sorted(zip(p["candidate"].tolist(), p["fidelity"].tolist(), p["split"].tolist(),
                          strict=True))

    assert made(one) == made(whole) and _batches(one) > _batches(whole)
    np.testing.assert_array_equal(one.cv_results_["eliminated_round"],
                                  whole.cv_results_["eliminated_round"])
    np.testing.assert_array_equal(one.sigma_, whole.sigma_)
    assert one.best_index_ == whole.best_index_


def test_best_first_chunks_follow_the_cost_of_a_pull():
    # chunk_cost worth of pulls per worker: 2 workers x ceil(1.0 / 0.3) = 8 pulls at
    # the cheap fidelity; the round is open until its last pull is told
    pol = IISEGamma(12, [0.3, 2.0], [0.5, 0.0], 0.05, 1.0, best_first=True, batch_size=2,
                    chunk_cost=1.0)
    p = pol.ask()
    assert len(p) == 8 and pol.round_open
    pol.tell(p, np.zeros(8))
    rest = pol.ask()
    assert len(rest) == 4 and pol.round_open
    pol.tell(rest, np.zeros(4))
    assert not pol.round_open and pol.n_rounds == 1
    pol.pull_costs_ = np.array([0.01, 0.5])  # measured seconds take over from lambda
    assert len(pol.ask()) == 12
    with pytest.raises(ValueError, match="chunk_cost"):
        IISEGamma(3, [1.0, 2.0], [0.1, 0.0], chunk_cost=0.0)
