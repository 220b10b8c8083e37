"""The one guarantee statement of a search or study (mftune.study.record.statement)."""

from mftune.study.record import statement

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
    assert "splits" in statement("repeated-splits", epsilon=0.01, **KW)


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
