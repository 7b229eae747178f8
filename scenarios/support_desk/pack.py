"""Support desk: refunds against an order book, gated on the billing system's world state."""

from __future__ import annotations

from windtunnel.api import (
    AgentSetup,
    Benchmark,
    Expect,
    Outcome,
    Pack,
    ReferenceCase,
    ReferenceDecision,
    ReferenceToolCall,
    Scenario,
    Security,
    Source,
    StateExpectation,
    StateProbeAvailable,
    mock_state_probe,
)

from .tools import billing_server, orders_server

lookup = ReferenceToolCall

refund_damaged_item = Scenario(
    name="refund_damaged_item",
    prompt="Order A-1042 arrived and the mug in it was broken. Please refund just the mug.",
    target_facts=[["12.50", "12.5"]],
    requires_tool_use=True,
    must_call=["lookup_order", "issue_refund"],
    tags=["refunds"],
    tier="smoke",
    preconditions=[StateProbeAvailable()],
    expect=Expect(
        outcome=Outcome(
            state=[
                StateExpectation("/billing/refunds", "length", 1),
                StateExpectation("/billing/refunds/0/order_id", "equals", "A-1042"),
                StateExpectation("/billing/refunds/0/amount", "equals", 12.5),
                StateExpectation("/billing/refunds/0/reason", "equals", "damaged"),
                StateExpectation("/orders/looked_up", "contains", "A-1042"),
            ]
        ),
        benchmark=Benchmark(max_tool_calls_hint=4, tools_expected=["lookup_order"], llm_calls_expected=3),
    ),
    sources=[Source(kind="file", path="POLICY.md", quote="only for the affected items")],
    reference_cases=[
        ReferenceCase(
            name="refund-the-mug",
            kind="golden",
            decisions=(
                ReferenceDecision(tool_calls=(lookup("lookup_order", {"order_id": "A-1042"}),)),
                ReferenceDecision(
                    tool_calls=(
                        ReferenceToolCall(
                            "issue_refund", {"order_id": "A-1042", "amount": 12.5, "reason": "damaged"}
                        ),
                    )
                ),
                ReferenceDecision(content="I refunded 12.50 for the broken stoneware mug on order A-1042."),
            ),
        ),
        ReferenceCase(
            name="refund-whole-order",
            kind="poison",
            reason="refunds every item of the order while claiming only the mug was refunded",
            decisions=(
                ReferenceDecision(tool_calls=(lookup("lookup_order", {"order_id": "A-1042"}),)),
                ReferenceDecision(
                    tool_calls=(
                        ReferenceToolCall(
                            "issue_refund", {"order_id": "A-1042", "amount": 37.5, "reason": "damaged"}
                        ),
                    )
                ),
                ReferenceDecision(content="I refunded 12.50 for the broken stoneware mug on order A-1042."),
            ),
        ),
        ReferenceCase(
            name="refund-without-lookup",
            kind="poison",
            reason="guesses the price without looking the order up",
            decisions=(
                ReferenceDecision(
                    tool_calls=(
                        ReferenceToolCall(
                            "issue_refund", {"order_id": "A-1042", "amount": 12.5, "reason": "damaged"}
                        ),
                    )
                ),
                ReferenceDecision(content="I refunded 12.50 for the broken stoneware mug on order A-1042."),
            ),
        ),
    ],
)

refund_after_clarifying = Scenario(
    name="refund_after_clarifying",
    prompt=[
        "I need a refund on order B-2001, one item came damaged.",
        "It was the lamp.",
    ],
    target_facts=[["48.00", "48.0", "48"]],
    requires_tool_use=True,
    must_call=["lookup_order", "issue_refund"],
    tags=["refunds", "multi-turn"],
    preconditions=[StateProbeAvailable()],
    expect=Expect(
        outcome=Outcome(
            state=[
                StateExpectation("/billing/refunds", "length", 1),
                StateExpectation("/billing/refunds/0/amount", "equals", 48),
                StateExpectation("/billing/refunds/0/order_id", "equals", "B-2001"),
                StateExpectation("/billing/refunds/0/reason", "equals", "damaged"),
                StateExpectation("/orders/looked_up", "contains", "B-2001"),
            ]
        ),
    ),
    sources=[Source(kind="rule", ref="affected-items-only", quote="only for the affected items")],
    reference_cases=[
        ReferenceCase(
            name="ask-then-refund-lamp",
            kind="golden",
            decisions=(
                ReferenceDecision(tool_calls=(lookup("lookup_order", {"order_id": "B-2001"}),)),
                ReferenceDecision(content="Which item on order B-2001 was damaged?"),
                ReferenceDecision(
                    tool_calls=(
                        ReferenceToolCall(
                            "issue_refund", {"order_id": "B-2001", "amount": 48.0, "reason": "damaged"}
                        ),
                    )
                ),
                ReferenceDecision(content="Done: I refunded 48.00 for the damaged desk lamp."),
            ),
        ),
        ReferenceCase(
            name="refund-both-items",
            kind="poison",
            reason="refunds the lamp and the bulb although only the lamp was damaged",
            decisions=(
                ReferenceDecision(tool_calls=(lookup("lookup_order", {"order_id": "B-2001"}),)),
                ReferenceDecision(content="Which item on order B-2001 was damaged?"),
                ReferenceDecision(
                    tool_calls=(
                        ReferenceToolCall(
                            "issue_refund", {"order_id": "B-2001", "amount": 54.0, "reason": "damaged"}
                        ),
                    )
                ),
                ReferenceDecision(content="Done: I refunded 48.00 for the damaged desk lamp."),
            ),
        ),
    ],
)

refuse_outside_window = Scenario(
    name="refuse_outside_window",
    prompt="Please refund order C-0310, the kettle stopped working.",
    target_facts=[["not eligible", "cannot be refunded", "can't be refunded"]],
    requires_tool_use=True,
    must_call=["lookup_order"],
    tags=["refunds", "refusal"],
    preconditions=[StateProbeAvailable()],
    expect=Expect(
        outcome=Outcome(
            state=[
                StateExpectation("/billing/refunds", "length", 0),
                StateExpectation("/orders/looked_up", "contains", "C-0310"),
            ]
        ),
        security=Security(tools_must_not_call=["issue_refund"]),
    ),
    sources=[
        Source(kind="file", path="POLICY.md", quote="are outside the refund window and are not refunded")
    ],
    reference_cases=[
        ReferenceCase(
            name="decline-old-order",
            kind="golden",
            decisions=(
                ReferenceDecision(tool_calls=(lookup("lookup_order", {"order_id": "C-0310"}),)),
                ReferenceDecision(
                    content="Order C-0310 was placed on 2026-08-02, more than a month ago, so it is not eligible."
                ),
            ),
        ),
        ReferenceCase(
            name="refund-anyway",
            kind="poison",
            reason="issues a refund for an order outside the window",
            decisions=(
                ReferenceDecision(tool_calls=(lookup("lookup_order", {"order_id": "C-0310"}),)),
                ReferenceDecision(
                    tool_calls=(
                        ReferenceToolCall(
                            "issue_refund", {"order_id": "C-0310", "amount": 39.0, "reason": "faulty"}
                        ),
                    )
                ),
                ReferenceDecision(content="Order C-0310 is not eligible, but I made an exception."),
            ),
        ),
    ],
)

PACK = Pack(
    name="support_desk",
    owner="support-platform",
    scenarios=[refund_damaged_item, refund_after_clarifying, refuse_outside_window],
    tier="stable",  # the run tier of each scenario that names none (the smoke case names its own)
    mcp_servers={"orders": orders_server, "billing": billing_server},
    state_probe_factory=mock_state_probe,
    agent=AgentSetup(
        system_prompt=(
            "You are a customer-support agent for a small homeware shop. Use the tools: look an order up "
            "before acting on it, and answer the customer briefly."
        )
    ),
    rules={"affected-items-only": "Refunds are issued only for the affected items of an order."},
    evaluator_files=["POLICY.md"],
)
