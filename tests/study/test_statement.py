"""The one guarantee statement of a search or study (mftune.study.record.statement)."""

import numpy as np

from mftune.study.record import shown_gap, statement

KW = dict(delta=0.05, sigma=[0.1, 0.05], bias_mode="known")


def test_the_rule_states_the_best_or_within_epsilon_in_one_sentence():
    best = statement("stopping-rule", epsilon=None, **KW)
    assert best.startswith("with probability >= 0.95 the recommended candidate is the best "
                           "candidate (sub-Gaussian pulls")
    assert statement("stopping-rule", epsilon=0.0, **KW) == best
    near = statement("stopping-rule", epsilon=0.01, **KW)
    assert near.startswith("with probability >= 0.95 the recommended candidate is within "
                           "epsilon=0.01 of the best candidate's score (sub-Gaussian")


def test_other_ends_make_no_claim():
    for reason in ("budget", "max-pulls", "repeated-splits"):
        assert statement(reason, epsilon=0.01, **KW).startswith("no confidence statement")
        assert statement(reason, epsilon=0.01, gap=float("nan"), **KW) == \
            statement(reason, epsilon=0.01, **KW)
    assert "splits" in statement("repeated-splits", epsilon=0.01, **KW)


def test_an_early_end_states_the_gap_it_has_shown():
    text = statement("budget", epsilon=0.01, gap=0.04321, **KW)
    assert text == ("no certificate at epsilon=0.01: the search stopped early (budget); it has "
                    "shown that with probability >= 0.95 the recommended candidate is within "
                    "0.04321 of the best candidate (sub-Gaussian pulls with sigma per fidelity "
                    "[0.1, 0.05], bias bounds known)")
    waves = {"n_candidates": 8, "n_waves": 2, "finished": None}
    text = statement("max-pulls", epsilon=None, gap=0.5, waves=waves, **KW)
    assert text.startswith("no certificate: the search stopped early (max-pulls)")
    assert "within 0.5 of the best of the 8 candidates evaluated in 2 wave(s) (delta split " \
        "over the waves; sub-Gaussian" in text


def test_the_gap_shown_is_the_certificate_s_epsilon_or_the_policy_s_bound():
    class Policy:
        def gap_bound(self):
            return 0.25

    assert shown_gap("stopping-rule", Policy(), 0.01, False) == 0.01
    assert shown_gap("stopping-rule", Policy(), None, False) == 0.0
    assert shown_gap("tie", Policy(), 0.01, False) == 0.0
    assert shown_gap("budget", Policy(), 0.01, False) == 0.25
    # evaluations that repeat a split are not the independent ones the bounds assume
    assert np.isnan(shown_gap("budget", Policy(), 0.01, True))
    assert np.isnan(shown_gap("repeated-splits", Policy(), 0.01, True))
    assert np.isnan(shown_gap("budget", object(), 0.01, False))  # a policy without one


def test_a_certificate_says_how_failed_pulls_were_scored():
    # a failed pull is told a stand-in score: the certificate is about means that
    # include it, and says so (only when some pull failed, and only when it certifies)
    clean = statement("stopping-rule", epsilon=0.01, **KW)
    assert "failed" not in clean
    text = statement("stopping-rule", epsilon=0.01, failed=3, **KW)
    assert "3 failed pull(s) scored as error_score or else the lowest score seen" in text
    waves = {"n_candidates": 8, "n_waves": 2, "finished": "surrogate"}
    assert "2 failed pull(s)" in statement("stopping-rule", epsilon=0.01, failed=2,
                                           waves=waves, **KW)
    assert "failed" not in statement("budget", epsilon=0.01, failed=3, **KW)
