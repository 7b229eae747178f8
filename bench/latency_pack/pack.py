"""bench_concurrency.py's pack: SESSIONS one-turn scenarios, so a sweep has that many independent jobs.

The latency stand-in answers "done" to each (the gate wants it): the bench measures scheduling, not agents.
"""

from windtunnel.api import Pack, ReferenceCase, ReferenceDecision, Scenario

SESSIONS = 16


def _scenario(index: int) -> Scenario:
    return Scenario(
        name=f"wait_{index:02d}",
        prompt=f"job {index}: answer when ready.",
        target_facts=[["done"]],
        reference_cases=[
            ReferenceCase(name="answer", kind="golden", decisions=(ReferenceDecision(content="done"),)),
            ReferenceCase(
                name="silent", kind="poison", decisions=(ReferenceDecision(content="..."),), reason="not done"
            ),
        ],
    )


PACK = Pack(name="latency", tier="stable", scenarios=[_scenario(i) for i in range(SESSIONS)])
