"""Mock tools of the support desk: an order book and a billing system over fictional fixture data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from windtunnel.api import MockServer, Tool, ToolError

FIXTURES = Path(__file__).parent / "fixtures"


def _fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


def _lookup_order(state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    order = state["orders"].get(arguments["order_id"])
    if order is None:
        raise ToolError(f"no order {arguments['order_id']}")
    # Successful lookups are world state, so a gate can tell a lookup that worked from one that failed.
    state["looked_up"].append(arguments["order_id"])
    return {"order_id": arguments["order_id"], **order}


def orders_server() -> MockServer:
    return MockServer(
        "orders",
        [
            Tool(
                name="lookup_order",
                description="Look up an order by its id: items with their prices, order date, customer.",
                input_schema={
                    "type": "object",
                    "properties": {"order_id": {"type": "string"}},
                    "required": ["order_id"],
                    "additionalProperties": False,
                },
                handler=_lookup_order,
            )
        ],
        {**_fixture("orders.json"), "looked_up": []},
    )


def _issue_refund(state: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    refund = {
        "refund_id": f"R-{len(state['refunds']) + 1:03d}",
        "order_id": arguments["order_id"],
        "amount": arguments["amount"],
        "reason": arguments.get("reason", ""),
    }
    state["refunds"].append(refund)
    return refund


def billing_server() -> MockServer:
    return MockServer(
        "billing",
        [
            Tool(
                name="issue_refund",
                description="Refund an amount of money against an order. Amount in the order's currency.",
                input_schema={
                    "type": "object",
                    "properties": {
                        "order_id": {"type": "string"},
                        "amount": {"type": "number", "exclusiveMinimum": 0},
                        "reason": {"type": "string"},
                    },
                    "required": ["order_id", "amount"],
                    "additionalProperties": False,
                },
                handler=_issue_refund,
            )
        ],
        {"refunds": []},
    )
