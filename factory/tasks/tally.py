"""The distribution of question items and their gold answers: the tasks stage's statistics, and
the release card's (over the released items)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any


class ItemTally:
    """Distributions of items and gold answers, for the stats."""

    def __init__(self) -> None:
        self.items = 0
        self.per_family: Counter[str] = Counter()
        self.per_tier: dict[str, Counter[str]] = defaultdict(Counter)
        self.skipped: Counter[str] = Counter()
        self.questions: Counter[str] = Counter()  # questions per family of question
        self.minus_one = 0
        self.nil = 0
        self.coverage: Counter[str] = Counter()
        self.state_types: Counter[str] = Counter()
        self.output_types: Counter[str] = Counter()
        self.n_questions: dict[str, Counter[int]] = defaultdict(Counter)

    def add(self, item: dict[str, Any]) -> None:
        family = item["family"]
        self.items += 1
        self.per_family[family] += 1
        self.per_tier[str(item.get("tier"))][family] += 1
        self.n_questions[family][item["n_questions"]] += 1
        for q in json.loads(item["questions"]):
            qf = q["family"]
            self.questions[qf] += 1
            answer = q["answer"]
            if qf == "next_line" and answer == -1:
                self.minus_one += 1
            elif qf == "state":
                if answer == "Nil":
                    self.nil += 1
                else:
                    self.state_types[answer.rsplit(";", 1)[1].strip()] += 1
            elif qf == "coverage":
                self.coverage[answer] += 1
            elif qf == "output":
                self.output_types[q["answer_type"]] += 1

    def to_dict(self) -> dict[str, Any]:
        def share(n: int, of: int) -> float:
            return round(n / of, 6) if of else 0.0

        def top(counter: Counter[str], n: int = 20) -> dict[str, int]:
            return dict(sorted(counter.most_common(n), key=lambda kv: (-kv[1], kv[0])))

        return {
            "items": self.items,
            "items_by_family": dict(sorted(self.per_family.items())),
            "items_by_tier": {
                tier: dict(sorted(c.items()))
                for tier, c in sorted(self.per_tier.items(), key=lambda kv: _tier_key(kv[0]))
            },
            "items_skipped": dict(sorted(self.skipped.items())),
            "questions_by_family": dict(sorted(self.questions.items())),
            "questions_per_item": {
                family: {str(k): v for k, v in sorted(c.items())}
                for family, c in sorted(self.n_questions.items())
            },
            "answers": {
                "next_line_minus_one": self.minus_one,
                "next_line_minus_one_share": share(self.minus_one, self.questions["next_line"]),
                "state_nil": self.nil,
                "state_nil_share": share(self.nil, self.questions["state"]),
                "state_types": top(self.state_types),
                "output_types": top(self.output_types),
                "coverage": dict(sorted(self.coverage.items())),
            },
        }


def _tier_key(tier: str) -> tuple[int, int | str]:
    return (0, int(tier)) if tier.lstrip("-").isdigit() else (1, tier)
