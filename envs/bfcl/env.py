"""One BFCL multi-turn entry as an episode.

Turns as BFCL plays them (its FC handler): each user question is an observation, verbatim; the
agent calls tools until it answers in text, which ends the turn and brings the next question; at a
`miss_func` entry's holdout turn the held-back functions join the tool list (`Accepted.tools`) and
the user says BFCL's "I have updated some more functions you can choose from. What about now?".
After the last turn's answer BFCL's `multi_turn_checker` judges the executed calls. An episode
that runs out of budget before the last answer reached fewer turns than the entry has: lost.

Two protocols (the suite's `protocol` option). `harness`: our contract checks each call against
BFCL's docs before it runs, a rejected call is not executed and ends the answer (the feedback
conditions' ground). `bfcl`: the leaderboard's own, so that a served model's run compares with its
published result file and an import replays what happened: every call of an answer runs in order
on the live backends whatever the one before returned, a call fails when BFCL's execution fails
(an exception or an `{"error": ...}`), and a turn is force-quit after BFCL's 20 steps. Under `bfcl` in
prompt mode the conversation is BFCL's prompting handler's (envs.bfcl.prompting): its system prompt
lists the functions, its decoder reads the calls out of the answer's text (the env is the Opening's
`CallReader`), the results come back in its one user message, a holdout turn lists the functions added.
"""

from __future__ import annotations

import copy
from typing import Any, Literal

from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI

from envs.bfcl import data, prompting, wire
from envs.bfcl.backends import Backends, functions
from envs.bfcl.calls import as_bfcl_ran, instance_name, parse
from envs.bfcl.checks import check
from envs.bfcl.decode import NotDecoded, Undecodable, call_text, prompting_calls
from envs.bfcl.failures import failed, violation
from envs.bfcl.judge import judge
from envs.contract import (
    Accepted,
    Action,
    Decoding,
    Opening,
    Outcome,
    Task,
    TextAnswer,
    ToolCall,
    ToolSpec,
    Violation,
)

Protocol = Literal["harness", "bfcl"]

# BFCL's constants.default_prompts.DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC
MORE_FUNCTIONS = "I have updated some more functions you can choose from. What about now?"
DONE = "Done."


def _openapi(properties: dict[str, Any]) -> dict[str, Any]:
    """BFCL's docs in the types an OpenAI-style server takes (its `_cast_to_openai_type`, with its
    own type table)."""
    out = {}
    for key, prop in properties.items():
        prop = dict(prop)
        kind = prop.get("type", "string")
        if kind == "float":
            prop["format"] = "float"
            prop["description"] = prop.get("description", "") + " This is a float type value."
        prop["type"] = GORILLA_TO_OPENAPI.get(kind, "string")
        if "properties" in prop:
            prop["properties"] = _openapi(prop["properties"])
        elif "items" in prop:
            prop["items"] = _openapi({"_": prop["items"]})["_"]
        out[key] = prop
    return out


def tool_spec(doc: dict[str, Any]) -> ToolSpec:
    params = {**doc["parameters"], "type": "object", "properties": _openapi(doc["parameters"].get("properties", {}))}
    return ToolSpec(name=doc["name"], description=doc["description"], parameters=params)


# a doc (one `data.docs` holds: the same object for the process's life, kept here so its id is never
# another's), unhinted or not, under a protocol -> its ToolSpec: each episode lists its classes' docs
# again (18-27 an entry, 17 us each to build); a ToolSpec is only read
_SPECS: dict[tuple[int, bool, str], tuple[dict[str, Any], ToolSpec]] = {}


def _spec(doc: dict[str, Any], unhinted: bool, protocol: str) -> ToolSpec:
    key = (id(doc), unhinted, protocol)
    got = _SPECS.get(key)
    if got is None or got[0] is not doc:
        spec = wire.tool(data.unhinted(doc) if unhinted else doc) if protocol == "bfcl" else tool_spec(doc)
        got = _SPECS[key] = (doc, spec)
    return got[1]


class BfclEnv:
    # a call on the backends is microseconds of Python; the checker's replay at the end a few ms
    blocking = False

    def __init__(
        self,
        task: Task,
        category: str,
        protocol: Protocol = "harness",
        tool_mode: str = "native",
        decoding: Decoding | None = None,
    ):
        self.task, self.category, self.protocol = task, category, protocol
        # BFCL's requests: its keys, its reading of an answer (envs.bfcl.wire)
        self.decoding = wire.decoding(decoding or Decoding()) if protocol == "bfcl" else None
        # BFCL's prompting handler's conversation: its own tool prompt, decoder and results message
        self.prompting = protocol == "bfcl" and tool_mode == "prompt"
        self.entry = data.entry(category, task.params["entry_id"])
        self.functions = functions(self.entry["involved_classes"])  # for the ground truth's signatures
        self.backends: Backends | None = None
        self._names: dict[str, str] | None = None
        self.turn = 0
        self.executed: list[list[dict[str, Any]]] = []
        self.verdict: dict[str, Any] | None = None
        # BFCL's checker on the turns so far, each time one ends: the entry cut after that turn
        self.turns_solved: list[bool] = []
        # calls our contract would have refused that BFCL's protocol ran (and its backend took)
        self.refused_ran = 0
        # answers BFCL's prompting decoder would have evaluated (arithmetic, a nested call): not run
        self.not_evaluated = 0
        self.forced_valid = False

    def reset(self) -> Opening:
        self.close()
        self.backends = Backends(
            self.entry["involved_classes"],
            self.entry.get("initial_config", {}),
            long_context=self.category == "long_context",
        )
        # the docs as `data.docs` holds them, only read here (data.functions' copies were 0.15 ms an entry)
        self.docs, self.held = data.functions(self.entry, shared=True)
        self.turn, self.executed, self.verdict, self.turns_solved, self.refused_ran = 0, [[]], None, [], 0
        self._names = None  # the backends' instance names (`_instances`), once an episode
        self.forced_valid = False
        self.not_evaluated = 0
        bfcl = self.protocol == "bfcl"
        first = [dict(m) for m in self.entry["question"][0]]
        return Opening(
            messages=prompting.with_system_prompt(first, self.docs) if self.prompting else first,
            tools=self._tools(),
            accepts=frozenset({"tool", "text"}),
            answer_calls="all" if bfcl else "until_rejected",
            step_limit=data.STEP_LIMIT if bfcl else None,
            tool_prompt="env" if self.prompting else "backend",
            decoding=self.decoding,
        )

    def read_calls(self, text: str) -> tuple[list[ToolCall], str | None]:
        """BFCL's prompting decoder on an answer's text (envs.contract.CallReader). What it fails on
        is an answer in text, which ends the turn as in BFCL; what it would evaluate (arithmetic, a
        nested call) is never run here: the turn ends too, said and counted (`not_evaluated`)."""
        try:
            calls = prompting_calls(text)
            for c in calls:
                call_text(c)  # BFCL's writer of the decoded calls fails on some the reader took
        except NotDecoded:
            return [], None
        except Undecodable as exc:
            self.not_evaluated += 1
            return [], f"BFCL's decoder would evaluate this answer, which is not done here: {exc}"
        return [c.model_copy(update={"id": f"call_{i}", "parse_mode": "bfcl"}) for i, c in enumerate(calls)], None

    def results_message(self, calls: list[ToolCall], results: list[str]) -> dict[str, Any]:
        """BFCL's prompting handler's message of an answer's results (envs.contract.CallReader)."""
        return prompting.results_message([call_text(c) for c in calls], results)

    def _tools(self) -> list[ToolSpec]:
        if self.protocol == "bfcl":  # as BFCL's handler compiles them: held-back docs without the hint
            start = len(self.docs) - sum(len(d) for t, d in self.held.items() if t <= self.turn)
            return [_spec(d, i >= start, "bfcl") for i, d in enumerate(self.docs)]
        return [_spec(d, False, "harness") for d in self.docs]

    def submit(self, action: Action) -> Outcome:
        if self.verdict is not None:
            return Accepted(
                observation="The conversation has ended.",
                done=True,
                won=self.verdict["valid"],
                lost=not self.verdict["valid"],
            )
        if isinstance(action, TextAnswer):
            return self._next_turn()
        return self._call(action)

    def _early(self) -> dict[str, dict[str, Any]]:
        """Held-back functions BFCL's own ground truth calls before the turn that adds them (one
        entry, miss_func_49, calls `tail` two turns early; BFCL executes any method of a backend,
        listed or not): accepted as gold plays them, from the turn the ground truth does."""
        names: dict[str, int] = {}
        for t, turn in enumerate(self.entry["ground_truth"]):
            for text in turn:
                names.setdefault(parse(text, self.functions.__getitem__).name, t)
        return {
            d["name"]: d
            for turn, docs in self.held.items()
            for d in docs
            if turn > self.turn >= names.get(d["name"], len(self.entry["question"]))
        }

    def _call(self, call: ToolCall) -> Outcome:
        assert self.backends is not None
        doc = next((d for d in self.docs if d["name"] == call.name), None) or self._early().get(call.name)
        rejected = check(call, doc, [d["name"] for d in self.docs])
        if self.protocol == "bfcl":
            return self._run_as_bfcl(call, rejected)
        if rejected is not None:
            # `raw` is what BFCL would have told the model, had it run the call (it runs them all)
            said, error = self.backends.says(call)
            return rejected.model_copy(update={"raw": said}) if error else rejected
        # what was sent, kept apart from what the backend holds: a backend keeps the lists it is
        # given (post_tweet's mentions) and changes them later (mention)
        self.executed[self.turn].append({"name": call.name, "arguments": copy.deepcopy(call.arguments)})
        shown, result, exc = self.backends.run(call.model_copy(update={"arguments": copy.deepcopy(call.arguments)}))
        if not failed(result, exc):
            return Accepted(observation=shown)
        cls = self.backends.methods[call.name][0]
        return violation(call, cls, self.backends.instances[cls], shown, exc)

    def _run_as_bfcl(self, call: ToolCall, rejected: Violation | None) -> Outcome:
        """BFCL's execution: any method of the entry's backends runs (a held-back one too), on the
        live state; our check only gives a failure its structure (location, allowed values)."""
        assert self.backends is not None
        # every decoded call is in what BFCL's checker replays, one its `eval` fails on too (a turn
        # of such calls is no empty turn to the checker)
        self.executed[self.turn].append({"name": call.name, "arguments": copy.deepcopy(call.arguments)})
        if call.name not in self.backends.methods or self.backends.unreadable(call):  # BFCL's `eval` fails: nothing ran
            said, _ = self.backends.says(call)
            refused = rejected or check(call, None, [])
            assert refused is not None  # no doc: always an unknown tool
            return refused.model_copy(update={"raw": said})
        ran = as_bfcl_ran(call, self._instances()) or call
        shown, result, exc = self.backends.run(ran.model_copy(update={"arguments": copy.deepcopy(ran.arguments)}))
        if not failed(result, exc):
            self.refused_ran += rejected is not None
            return Accepted(observation=shown)
        if rejected is not None:
            return rejected.model_copy(update={"raw": shown})
        cls = self.backends.methods[call.name][0]
        return violation(call, cls, self.backends.instances[cls], shown, exc)

    def _instances(self) -> dict[str, str]:
        """Each method's instance name in BFCL's execution (its text rewrites string literals
        with them, calls.as_bfcl_ran): the model's name (an import's folder) joins it, as the
        release played on names it (an import of an older file, a fork of one: that release's)."""
        assert self.backends is not None
        if self._names is None:  # once an episode: its backends, task and release are the episode's
            model = str(self.task.params.get("bfcl_model", "model"))
            release = data.version()
            self._names = {
                name: instance_name(release, model, self.entry["id"], cls)
                for name, (cls, _) in self.backends.methods.items()
            }
        return self._names

    def force_quit(self) -> Accepted:
        """BFCL's evaluate on an entry its handler force-quit (envs.contract.ForceQuits): the turns
        it reached are judged as any others, so one quit in the last turn is valid where the state
        is right; one quit before it is lost (turns not reached). The harness's own rule (lost
        either way) is recorded beside it where they differ (`record_extra`)."""
        self.verdict = judge(self.entry, self.executed, self.backends)
        self.forced_valid = bool(self.verdict["valid"])
        if self.turn == len(self.entry["question"]) - 1:
            self.turns_solved.append(self.forced_valid)
        return Accepted(observation="Force-quit.", done=True, won=self.forced_valid, lost=not self.forced_valid)

    def segment(self) -> int:
        """The user's turn the episode is in (envs.contract.Segmented)."""
        return self.turn

    def _next_turn(self) -> Outcome:
        self.turn += 1
        questions = self.entry["question"]
        if self.turn == len(questions):
            self.verdict = judge(self.entry, self.executed, self.backends)
            self.turns_solved.append(bool(self.verdict["valid"]))
            won = bool(self.verdict["valid"])
            return Accepted(observation="The conversation is over.", done=True, won=won, lost=not won)
        cut = {**self.entry, "ground_truth": self.entry["ground_truth"][: self.turn]}
        self.turns_solved.append(bool(judge(cut, self.executed, self.backends)["valid"]))
        self.executed.append([])
        if self.turn in self.held:
            self.docs = [*self.docs, *self.held[self.turn]]
            said = prompting.more_functions(self.held[self.turn]) if self.prompting else MORE_FUNCTIONS
            return Accepted(observation=said, tools=self._tools())
        return Accepted(observation="\n\n".join(str(m["content"]) for m in questions[self.turn]))

    def reference(self) -> list[Action]:
        """BFCL's ground truth, turn by turn, each turn closed by an answer in text."""
        out: list[Action] = []
        for t, turn in enumerate(self.entry["ground_truth"]):
            for i, text in enumerate(turn):
                out.append(parse(text, self.functions.__getitem__).model_copy(update={"id": f"call_{t}_{i}"}))
            out.append(TextAnswer(text=DONE))
        return out

    def record_extra(self) -> dict[str, Any]:
        return {
            "bfcl": {
                "entry_id": self.entry["id"],
                "category": self.category,
                "turns": len(self.entry["question"]),
                "turns_started": len(self.executed),
                "turns_answered": self.turn,
                "executed": self.executed,
                "verdict": self.verdict,
            },
            "segments_solved": self.turns_solved,
            **({"protocol": "bfcl", "refused_ran": self.refused_ran} if self.protocol == "bfcl" else {}),
            # BFCL's verdict (the record's success) won a force-quit entry the harness's own rule calls lost
            **({"force_quit_won": True} if self.forced_valid else {}),
            **({"tool_prompt": "bfcl", "not_evaluated": self.not_evaluated} if self.prompting else {}),
        }

    def close(self) -> None:
        if self.backends is not None:
            self.backends.close()  # its sidecar process ends
        self.backends = None
