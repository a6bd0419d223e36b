"""The holes wing: unjudged documents, their exact bounds, estimates of what judging them will show,
inference from a judged sample, and machine labels corrected by people (PPI)."""
