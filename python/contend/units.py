"""Display units shared by tables and pictures."""


def time_unit(seconds: float) -> tuple[str, float]:
    """µs for what is over within a millisecond, ms within ten seconds, s beyond: (label, factor from seconds)."""
    if seconds < 1e-3:
        return "µs", 1e6
    return ("ms", 1e3) if seconds < 10.0 else ("s", 1.0)
