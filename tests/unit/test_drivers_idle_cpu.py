"""Whether the machine's CPU has room for a start ahead (windtunnel._drivers.idle_cpu), from a /proc/stat
written by the test and a clock it moves."""

from __future__ import annotations

from pathlib import Path

from windtunnel._drivers.idle_cpu import IDLE_FLOOR, STAT, WINDOW_S, IdleCpu, cpu_ticks


class Machine:
    """A /proc/stat whose first line the test advances, and a clock."""

    def __init__(self, tmp_path: Path) -> None:
        self.stat = tmp_path / "stat"
        self.now = 100.0
        self.busy = self.idle = 0
        self._write()

    def run(self, seconds: float, busy: int, idle: int) -> None:
        self.now += seconds
        self.busy += busy
        self.idle += idle
        self._write()

    def _write(self) -> None:
        # user nice system idle iowait irq softirq steal guest guest_nice; guest is inside user already
        user, system = self.busy // 2, self.busy - self.busy // 2
        cpu = f"cpu  {user} 0 {system} {self.idle} 0 0 0 0 {user} 0"
        self.stat.write_text(f"{cpu}\ncpu0 1 2 3 4 5 6 7 8 9 10\nintr 1\n", encoding="ascii")

    def idle_cpu(self) -> IdleCpu:
        return IdleCpu(self.stat, clock=lambda: self.now)


def test_room_while_a_fifth_is_idle_and_none_when_every_core_is_busy(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    idle = machine.idle_cpu()
    machine.run(WINDOW_S, busy=160, idle=40)
    assert idle.has_room()
    machine.run(WINDOW_S, busy=198, idle=2)
    assert not idle.has_room()


def test_the_floor_counts_as_room(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    idle = machine.idle_cpu()
    idle_ticks = int(IDLE_FLOOR * 1000)
    machine.run(WINDOW_S, busy=1000 - idle_ticks, idle=idle_ticks)
    assert idle.has_room()


def test_a_window_shorter_than_the_least_keeps_the_last_answer(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    idle = machine.idle_cpu()
    machine.run(WINDOW_S, busy=200, idle=0)
    assert not idle.has_room()
    machine.run(WINDOW_S / 4, busy=0, idle=50)  # a short idle burst does not decide alone
    assert not idle.has_room()
    machine.run(WINDOW_S, busy=100, idle=100)  # measured over the whole time since the last window
    assert idle.has_room()


def test_room_before_a_first_window_and_where_there_is_no_proc_stat(tmp_path: Path) -> None:
    machine = Machine(tmp_path)
    machine.busy = 10**6
    assert machine.idle_cpu().has_room()
    nowhere = IdleCpu(tmp_path / "absent", clock=lambda: machine.now)
    machine.run(10 * WINDOW_S, busy=200, idle=0)
    assert nowhere.has_room()
    (tmp_path / "garbled").write_text("intr 1 2 3 4 5 6\n", encoding="ascii")
    assert IdleCpu(tmp_path / "garbled", clock=lambda: machine.now).has_room()


def test_this_machines_proc_stat_is_read_where_there_is_one() -> None:
    if not STAT.exists():
        return
    ticks = cpu_ticks(STAT)
    assert ticks is not None and 0 < ticks[0] < ticks[1], ticks
