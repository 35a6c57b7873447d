"""Self-play and TD(lambda) learning of the evaluator (issue 4)."""
