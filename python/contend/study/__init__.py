"""Design-space studies: a study file swept over scenario axes, run on Dask into a Parquet dataset, and reported.

    >>> from contend import study
    >>> s = study.load("examples/studies/seed003-reduced.yaml")
    >>> study.run(s, "results/")              # LocalCluster on this machine's cores
    >>> df, meta = study.read("results/")     # one row per job per point
"""

from contend.study.dataset import read
from contend.study.execute import run
from contend.study.spec import Point, Study, load, parse

__all__ = ["Point", "Study", "load", "parse", "read", "run"]
