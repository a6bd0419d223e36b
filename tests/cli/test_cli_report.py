"""judged report's measure list (judged.cli.report_command)."""

from judged.cli.report_command import with_judged_at_k


def test_trec_eval_forms_expand_and_judged_at_the_first_cutoff_is_added():
    assert with_judged_at_k(["P.5,10", "map"]) == ["P_5", "P_10", "map", "Judged@5"]
    assert with_judged_at_k(["nDCG@20", "Judged@10"]) == ["nDCG@20", "Judged@10"]
