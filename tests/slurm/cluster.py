"""A real single-node SLURM for the tests: munge, slurmctld and slurmd on this machine.

Everything lives in one private folder (key, sockets, state, spool, logs, slurm.conf) on free
ports, so nothing under /etc is touched and a cluster the machine may already run is left
alone. Clients (sbatch, squeue, scancel, scontrol; submitit calls them) find it through
`SLURM_CONF`, which `Cluster.env` holds. The daemons run in the foreground as children of the
test process, as root (`SlurmUser=root`), which is what CI and this machine give; `stop()`
ends them.

    python tests/slurm/cluster.py      # bring one up, print sinfo, keep it until Enter
"""
from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

CLUSTER_NAME = "nlitest"
DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "scontrol", "sinfo")
INSTALL = "apt-get install -y slurmctld slurmd slurm-client munge"
# Seconds a requeued job waits before it may start again (SLURM's cred_expire, default 120).
REQUEUE_DELAY_S = 5
# Seconds between SIGTERM and SIGKILL when a job is cancelled, requeued or out of time.
KILL_WAIT_S = 5


def missing_binaries() -> list[str]:
    """The SLURM/munge programs this machine lacks (empty: a cluster can be brought up)."""
    return [name for name in (*DAEMONS, *CLIENTS)
            if shutil.which(name) is None and not Path("/usr/sbin", name).is_file()]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return sock.getsockname()[1]


def _program(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin", name))


def _real_memory_mb() -> int:
    """The node's memory as SLURM is told it: below the machine's, so slurmd accepts it."""
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20 * 0.8)


def slurm_conf(root: Path, host: str, cpus: int, memory_mb: int, ports: tuple[int, int]) -> str:
    """A minimal slurm.conf for one node that is also the controller, without accounting."""
    return "\n".join([
        f"ClusterName={CLUSTER_NAME}",
        f"SlurmctldHost={host}(127.0.0.1)",  # no name lookup needed: CI hosts may not resolve theirs
        "SlurmUser=root",
        "SlurmdUser=root",
        f"SlurmctldPort={ports[0]}",
        f"SlurmdPort={ports[1]}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={root / 'munge.sock'},cred_expire={REQUEUE_DELAY_S}",
        f"StateSaveLocation={root / 'state'}",
        f"SlurmdSpoolDir={root / 'spool'}",
        f"SlurmctldPidFile={root / 'slurmctld.pid'}",
        f"SlurmdPidFile={root / 'slurmd.pid'}",
        f"SlurmctldLogFile={root / 'slurmctld.log'}",
        f"SlurmdLogFile={root / 'slurmd.log'}",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "SchedulerType=sched/backfill",
        "SchedulerParameters=sched_interval=2",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "MpiDefault=none",
        "ReturnToService=2",
        "MailProg=/bin/true",
        f"KillWait={KILL_WAIT_S}",
        "MinJobAge=600",
        f"NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN",
        "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


@dataclass
class Cluster:
    """One node, up after `start()`; `env` is what a client process needs to reach it."""

    root: Path
    host: str = field(default_factory=socket.gethostname)
    cpus: int = field(default_factory=lambda: os.cpu_count() or 1)
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def conf(self) -> Path:
        return self.root / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        return {"SLURM_CONF": str(self.conf)}

    def start(self, timeout: float = 60) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.root.chmod(0o755)  # munge wants its socket's folder open to all
        for folder in ("state", "spool"):
            (self.root / folder).mkdir(exist_ok=True)
        key = self.root / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        key.chmod(0o400)
        self.conf.write_text(slurm_conf(self.root, self.host, self.cpus, _real_memory_mb(),
                                        (_free_port(), _free_port())))
        self._spawn("munged", "-F", "--force", f"--key-file={key}", f"--socket={self.root / 'munge.sock'}",
                    f"--pid-file={self.root / 'munged.pid'}", f"--log-file={self.root / 'munged.log'}",
                    f"--seed-file={self.root / 'munged.seed'}")
        self._wait(lambda: (self.root / "munge.sock").exists(), timeout, "munged")
        self._spawn("slurmctld", "-D", "-i", "-f", str(self.conf))
        self._spawn("slurmd", "-D", "-f", str(self.conf))
        self._wait(self.idle, timeout, "the node to be idle")

    def run(self, *command: str, check: bool = True) -> subprocess.CompletedProcess:
        """A SLURM client command against this cluster."""
        return subprocess.run(command, env={**os.environ, **self.env}, capture_output=True, text=True,
                              check=check, timeout=30)

    def idle(self) -> bool:
        state = self.run("sinfo", "--noheader", "--format=%t", check=False)
        return state.returncode == 0 and state.stdout.strip() == "idle"

    def queue(self) -> list[str]:
        """Job ids SLURM still holds pending or running (array tasks as <job>_<task>)."""
        listed = self.run("squeue", "--noheader", "--format=%i", check=False)
        return listed.stdout.split()

    def stop(self) -> None:
        """Cancel every job (so that no job step outlives its controller), then end the daemons."""
        if "slurmctld" in self.processes and self.processes["slurmctld"].poll() is None:
            jobs = self.queue()
            if jobs:
                self.run("scancel", "--full", *jobs, check=False)
            deadline = time.monotonic() + 60
            while self.queue() and time.monotonic() < deadline:
                time.sleep(1)
        for name in reversed(DAEMONS):
            process = self.processes.pop(name, None)
            if process is None:
                continue
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def logs(self) -> str:
        """The daemons' logs, for a failing test's message."""
        return "\n".join(f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}"
                         for path in sorted(self.root.glob("*.log")))

    def _spawn(self, name: str, *args: str) -> None:
        log = (self.root / f"{name}.out").open("w")
        self.processes[name] = subprocess.Popen([_program(name), *args], stdout=log, stderr=subprocess.STDOUT,
                                                env={**os.environ, **self.env})

    def _wait(self, ready, timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            failed = [name for name, p in self.processes.items() if p.poll() is not None]
            if failed or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"SLURM test cluster: waiting for {what} failed "
                                   f"({', '.join(failed) or 'timeout'} ); logs:\n{self.logs()}")
            time.sleep(0.5)


def main() -> None:
    cluster = Cluster(Path(tempfile.mkdtemp(prefix="slurm-")))
    cluster.start()
    try:
        print(cluster.run("sinfo").stdout)
        print(f"export SLURM_CONF={cluster.conf}")
        input("Enter stops the cluster ")
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()
