"""One game under the veriharness protocol: the study's artifact, reproduced request for request.

Against our `plan` protocol (the cleaner design: conditions differ only in information), this
one keeps everything the artifact did that can move solved counts or call counts: the LeafOutput
envelope and its gates, the ~550-word worker prompt, the retry prompt that shows the feedback
twice, the per-condition repair lines and the request keys (no top_p unless the run sets one,
no seed unless sampling, `"stream": false`).
"""

from __future__ import annotations

import json
from typing import Any

from envs.contract import Accepted, Action, EpisodeContext, Opening, Outcome, TextAnswer, Violation
from envs.textworld.engine import GameModel
from envs.textworld.manifest import GameEntry
from envs.textworld.options import PlayOptions
from envs.textworld.veriharness import prompt, stimuli
from envs.textworld.veriharness.envelope import parse_leaf
from envs.textworld.veriharness.fields import fields
from envs.textworld.veriharness.gates import GateReport, accepted, run_gates

PROTOCOL = "veriharness"


class VeriharnessEnv:
    # every attempt is replayed on the game: milliseconds of CPU
    blocking = True

    def __init__(self, entry: GameEntry, model: GameModel, options: PlayOptions, ctx: EpisodeContext):
        # which paper conditions the protocol plays is checked once, when the spec loads
        # (conditions.resolve: the veriharness feedback family); the variant names the condition
        assert ctx.condition is not None, "the veriharness protocol plays under a condition"
        self.entry, self.model, self.options, self.ctx = entry, model, options, ctx
        self.variant = stimuli.VARIANTS[ctx.condition.feedback]
        self.task_id = prompt.task_id(entry.seed)
        self.cut = stimuli.value_cut(ctx.condition.cut)
        top_p = ctx.decoding.top_p
        self.decoding = ctx.decoding.model_copy(update={"top_p": None if top_p == 1.0 else top_p, "stream": False})
        self.attempt = 0
        self.feedback: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self._words = 0
        self._closed = False

    def _messages(self) -> list[dict[str, str]]:
        msgs = prompt.messages(
            self.entry, self.variant, self.options.max_commands, self.ctx.budget, self.attempt, self.feedback
        )
        self._words = prompt.words(msgs[1]["content"])
        return msgs

    def reset(self) -> Opening:
        self.attempt, self.feedback, self.calls = 0, [], []
        return Opening(
            messages=self._messages(),
            tools=[],
            history="last",
            accepts=frozenset({"text"}),
            echo_chars=self.options.echo_chars,
            retry="env",
            decoding=self.decoding,
        )

    def retry_messages(self, feedback: list[str]) -> list[dict[str, str]]:
        """The next request after a rejected attempt: the task context with the condition's lines."""
        self.feedback = list(feedback)
        return self._messages()

    def submit(self, action: Action) -> Outcome:
        if self._closed:
            raise RuntimeError("submit() on a closed TextWorld env")
        # the artifact read only the message text; a tool call (none is offered) counts as no text
        text = action.text if isinstance(action, TextAnswer) else ""
        parsed = parse_leaf(text, self.task_id, self.options.fence_strip)
        results = run_gates(parsed.leaf, self.task_id, self.model, self.options.max_commands, self.options.k_allowed)
        failures = [(r.gate, f) for r in results for f in r.failures]
        # per answered call; the prompt built after the last answer of a spent budget is never sent
        self.calls.append(
            {
                "attempt": self.attempt,
                "prompt_words_user": self._words,
                "fenced": parsed.fenced,
                "parsed": parsed.parse_error is None,
                "gate_failures": [f"{gate}.{f.code}" for gate, f in failures],
            }
        )
        self.attempt += 1
        if accepted(results):
            return Accepted(observation="Every gate passed: the plan completes the objective.", done=True, won=True)
        gate, first = next((r.gate, f) for r in results if r.hard for f in r.failures)
        shown = fields(gate, first, parsed.leaf, self.task_id, None)
        report = GateReport(
            leaf=parsed.leaf, results=tuple(results), task_id=self.task_id, echo_chars=self.options.echo_chars
        )
        # raw: every gate's own message, as the artifact's validator wrote it
        raw = "\n".join(f"{gate}.{f.code}: {f.message}" for gate, f in failures)
        return Violation.gate_failure(first.code, first.message, shown["location"], shown["observed"], raw, report)

    def reference(self) -> list[Action]:
        """The walkthrough in the full LeafOutput envelope every gate accepts."""
        leaf = {
            "task_id": self.task_id,
            "answer": json.dumps({"commands": list(self.entry.walkthrough)}),
            "artifacts": [stimuli.REQUIRED_ARTIFACT],
            "claims": [],
            "self_assessment": {},
            "done": True,
        }
        return [TextAnswer(text=json.dumps(leaf))]

    def record_extra(self) -> dict[str, Any]:
        keys = ["model", "messages", "max_tokens", "temperature", "stream"]
        keys += [k for k in ("top_p", "seed") if getattr(self.decoding, k) is not None]
        answered = self.calls
        words = [c["prompt_words_user"] for c in answered]
        return {
            "protocol": PROTOCOL,
            "action": "plan",
            "artifact_task_id": self.task_id,
            "variant": self.variant,
            "game_seed": self.entry.seed,
            "fence_strip": self.options.fence_strip,
            "fenced_answers": sum(c["fenced"] for c in answered),
            "fenced": [c["fenced"] for c in answered],
            "value_cut": self.cut,
            "echo_chars": self.options.echo_chars,
            "request_keys": sorted(keys),
            # the paper's cost proxy: whitespace words of each call's user prompt (system line excluded)
            "prompt_words_user": words,
            "prompt_words_user_total": sum(words),
            "gate_failures": [c["gate_failures"] for c in answered],
        }

    def close(self) -> None:
        self._closed = True
