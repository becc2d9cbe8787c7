"""Display units shared by tables and pictures."""


def time_unit(seconds: float) -> tuple[str, float]:
    """µs for what is over within a millisecond, ms otherwise: (label, factor from seconds)."""
    return ("µs", 1e6) if seconds < 1e-3 else ("ms", 1e3)
