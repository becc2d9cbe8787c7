"""Run a contend study on a SLURM or PBS cluster through dask-jobqueue: a template to adapt, not run as is.

    pip install dask-jobqueue==0.9.0          # on the login node, in the environment that has contend
    python examples/studies/slurm_cluster.py examples/studies/seed003-full.yaml seed003-full
    contend report seed003-full

Each batch job starts `processes` single-threaded Dask workers (one simulation per core). The script on the
login node is the client: it writes each finished point to the results folder at once, so it can be
stopped and started again, and a rerun skips what is done. Workers need contend installed in the same
version (the prologue activates its environment) but no shared file system.

Alternatively start the cluster by other means and pass its scheduler's address:
    contend study STUDY.yaml -o RESULTS --scheduler tcp://HOST:8786
"""

import sys

from dask_jobqueue import SLURMCluster  # PBS: from dask_jobqueue import PBSCluster (same arguments, queue/account)
from distributed import Client

from contend import study

cluster = SLURMCluster(
    queue="normal",  # your partition
    account="my-project",  # your allocation
    cores=32,  # cores per batch job ...
    processes=32,  # ... one worker process each
    memory="64GB",  # a 2,048-GPU point takes well under 1 GB
    walltime="02:00:00",
    job_script_prologue=["source $HOME/venvs/contend/bin/activate"],
)
cluster.adapt(minimum_jobs=1, maximum_jobs=10)  # batch jobs come and go with the work left

with Client(cluster) as client:
    outcome = study.run(study.load(sys.argv[1]), sys.argv[2], client=client)
    print(f"{outcome.ran} points run, {outcome.skipped} already done")
