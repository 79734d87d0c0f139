"""The scheduler: one action per tick, round robin over the missions, at a fixed rate.

Deterministic for a seed: the order of actions depends only on the seed and the ticks,
unless a human decides an approval request (the scenario then follows the decision).
SIGTERM and SIGINT set a flag checked between ticks, so a line is never torn.
"""

from __future__ import annotations

import random
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TextIO

from simulator.mission import AwaitDecisions, Mission, Script, Sleep
from simulator.scenarios import SCENARIOS, clock_for
from simulator.setup import create_mission, write_setup
from store.writers.agent import AgentError, utcnow


@dataclass(slots=True)
class Slot:
    """One mission being played, and when it may act next."""

    mission: Mission
    script: Script
    wake_tick: int = 0
    awaiting: AwaitDecisions | None = None
    finished: bool = False


class Runner:
    def __init__(
        self,
        root: Path,
        missions: int = len(SCENARIOS),
        rate: float = 20.0,
        seed: int = 1,
        ticks: int | None = None,
        log: TextIO = sys.stderr,
    ) -> None:
        if missions < 1 or rate <= 0:
            raise ValueError("missions must be >= 1 and rate > 0")
        self.root = root
        self.rate = rate
        self.ticks = ticks
        self.log = log
        self.stopping = False
        self.tick = 0
        self.pointer = -1
        self.slots: list[Slot] = []
        self.missions = missions
        self.seed = seed

    def setup(self) -> None:
        """Create the missions (intent and constraints first); play the historical ones."""
        if self.slots:
            return
        master = random.Random(self.seed)
        for index in range(self.missions):
            scenario = SCENARIOS[index % len(SCENARIOS)]
            mission_id = create_mission(self.root, scenario.base_id)
            clock = clock_for(scenario)
            write_setup(self.root, mission_id, scenario.brief, clock())
            mission = Mission(self.root, mission_id, random.Random(master.getrandbits(64)), clock)
            slot = Slot(mission, scenario.script(mission))
            if scenario.history:  # a mission whose agent stopped long ago: write its past now
                while not slot.finished and not self.stopping:
                    self._advance(slot)
            self.slots.append(slot)
            if self.stopping:
                return

    def stop(self, signum: int = 0, frame: FrameType | None = None) -> None:
        """Ask the loop to stop after the current action (safe in a signal handler)."""
        self.stopping = True

    def _ready(self, slot: Slot) -> bool:
        if slot.finished:
            return False
        if self.tick >= slot.wake_tick:
            return True
        waiting = slot.awaiting
        if waiting is None:
            return False
        if any(path.exists() for path in waiting.paths):
            return True
        return waiting.deadline is not None and utcnow() >= waiting.deadline

    def _advance(self, slot: Slot) -> None:
        try:
            action = next(slot.script)
        except StopIteration:
            slot.finished = True
            return
        except (AgentError, OSError) as exc:
            print(f"simulator: mission {slot.mission.id} stopped: {exc}", file=self.log)
            slot.finished = True
            return
        slot.awaiting = None
        if isinstance(action, Sleep):
            slot.wake_tick = self.tick + max(1, action.ticks)
        elif isinstance(action, AwaitDecisions):
            slot.wake_tick = self.tick + max(1, action.ticks)
            slot.awaiting = action
        else:
            slot.wake_tick = self.tick + 1

    def step(self) -> None:
        """One tick: advance the next ready mission after the last one that acted."""
        self.setup()
        count = len(self.slots)
        for offset in range(1, count + 1):
            index = (self.pointer + offset) % count
            slot = self.slots[index]
            if self._ready(slot):
                self.pointer = index
                self._advance(slot)
                break
        self.tick += 1

    def run(self) -> int:
        previous = {sig: signal.signal(sig, self.stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.setup()
            begin = time.monotonic()
            done_at = 0
            while not self.stopping:
                if self.ticks is not None and self.tick >= self.ticks:
                    break
                if all(slot.finished for slot in self.slots):
                    break
                self.step()
                target = begin + (self.tick - done_at) / self.rate
                delay = target - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
                elif delay < -1.0:  # fell behind (slow disk): do not burst to catch up
                    begin, done_at = time.monotonic(), self.tick
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        print(f"simulator: stopped after {self.tick} ticks", file=self.log)
        return 0
