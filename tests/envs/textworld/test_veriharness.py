"""The veriharness protocol's parts on real games: envelope, gates, repair lines, prompts, keys."""

from __future__ import annotations

import json

import pytest

from conditions import resolve
from envs.contract import Accepted, Decoding, EpisodeContext, Task, TextAnswer, Violation
from envs.textworld.suite import PaperTextWorld, TextWorld
from envs.textworld.veriharness.envelope import parse_leaf

pytestmark = pytest.mark.slow

PAPER = PaperTextWorld()
WALK = ["go east", "take worm"]
TASK = Task(
    suite="paper-textworld",
    task_id="tw-20261051",
    params={"seed": 20261051, "rooms": 3, "objects": 4, "quest_length": 2},
)


class Played:
    """A veriharness env and the condition it plays: `feedback` is what the condition's renderer
    (conditions.veriharness) writes about the last rejected attempt, as the loop asks it."""

    def __init__(self, env, ctx):
        self.env, self.ctx, self.feedback = env, ctx, []

    def __getattr__(self, name):
        return getattr(self.env, name)

    def submit(self, action):
        outcome = self.env.submit(action)
        if isinstance(outcome, Violation):
            self.feedback = self.ctx.condition.items(outcome)
        return outcome

    def retry_messages(self):
        return self.env.retry_messages(self.feedback)


def _ctx(feedback, *, cut=None, budget=4, decoding=None):
    return EpisodeContext(
        budget=budget, decoding=decoding or Decoding(), condition=resolve(feedback, "veriharness", cut=cut)
    )


def env(feedback="allowed_json", *, cut=None, budget=4, decoding=None, **options):
    opts = PAPER.options_model(protocol="veriharness", seeds="20261051", **options)
    ctx = _ctx(feedback, cut=cut, budget=budget, decoding=decoding)
    return Played(PAPER.make(TASK, opts, ctx), ctx)


def leaf(commands, **fields):
    return json.dumps(
        {
            "task_id": "textworld-20261051",
            "answer": json.dumps({"commands": commands}),
            "artifacts": ["action_plan.json"],
            **fields,
        }
    )


def user(messages):
    return messages[1]["content"]


def test_an_answer_given_as_an_object_is_reencoded_and_wins():
    e = env()
    e.reset()
    text = json.dumps(
        {"task_id": "textworld-20261051", "answer": {"commands": WALK}, "artifacts": ["action_plan.json"]}
    )
    assert isinstance(e.submit(TextAnswer(text=text)), Accepted)


def test_fences_fail_by_default_and_parse_with_the_switch_and_are_counted_both_ways():
    fenced = f"```json\n{leaf(WALK)}\n```"
    off = env()
    off.reset()
    outcome = off.submit(TextAnswer(text=fenced))
    assert isinstance(outcome, Violation) and outcome.code == "schema_invalid"
    on = env(fence_strip=True)
    on.reset()
    assert isinstance(on.submit(TextAnswer(text=fenced)), Accepted)
    assert off.record_extra()["fenced"] == [True] and on.record_extra()["fenced_answers"] == 1


def test_an_unparseable_answer_gives_four_items_and_no_echo():
    e = env("loc_obs")
    e.reset()
    e.submit(TextAnswer(text="[" * 100_000))  # nested past the recursion limit: one more unparseable answer
    items = e.feedback
    assert len(items) == 5 and items[0].startswith("Previous attempt failed typed validation")
    assert [json.loads(i.split("=", 1)[1])["label"] for i in items[1:]] == [
        "schema.schema_invalid",
        "schema.empty_answer",
        "artifact.artifact_missing",
        "textworld.action_plan_invalid",
    ]
    assert not any("rejected" in i for i in items)
    retry = user(e.retry_messages())
    assert retry.count(items[1]) == 1 and json.dumps(items[1])[1:-1] in retry  # bullets, and JSON-escaped in the pack


def test_gate_failures_that_the_plan_protocol_names_differently():
    e = env("allowed_prose")
    e.reset()
    e.submit(TextAnswer(text=leaf([])))
    assert (
        "The rejected value was at LeafOutput.answer.commands[0]. The validator observed []. "
        "It expected at least one command." in e.feedback
    )
    # a wrong task id costs a call even when the plan wins
    e.submit(TextAnswer(text=leaf(WALK).replace("textworld-20261051", "tw-20261051")))
    assert e.feedback[1] == (
        "The rejected value was at LeafOutput. The validator observed tw-20261051. It expected textworld-20261051."
    )
    assert e.record_extra()["gate_failures"] == [["textworld.command_missing"], ["schema.task_id_mismatch"]]


def test_the_soft_verifier_never_blocks_but_is_reported_with_a_failure():
    risky = {"self_assessment": {"risks": ["Unsupported guess"]}}
    e = env("raw")
    e.reset()
    assert isinstance(e.submit(TextAnswer(text=leaf(WALK, **risky))), Accepted)
    e.reset()
    e.submit(TextAnswer(text=leaf(["look"], **risky)))
    assert "Raw validation message from llm_verifier: Verifier found unsupported-risk marker." in e.feedback


def test_the_value_cut_is_a_parameter():
    short, full = env("allowed_json"), env("allowed_json", cut=10_000)
    for e in (short, full):
        e.reset()
        e.submit(TextAnswer(text=leaf(["go wesst"])))
    expected = [json.loads(i.split("=", 1)[1])["expected"] for i in (short.feedback[1], full.feedback[1])]
    assert len(expected[0]) == 240 and expected[0] == expected[1][:240]
    assert json.loads(expected[1])[-1] == "put non-euclidean latchkey on mantelpiece"  # the whole list, game order


def test_request_keys_follow_the_run_greedy_and_sampled():
    greedy = env().reset().decoding
    assert (greedy.top_p, greedy.seed, greedy.stream) == (None, None, False)
    sampled = env(decoding=Decoding(temperature=0.3, top_p=0.9, seed=3101)).reset().decoding
    assert (sampled.top_p, sampled.seed, sampled.stream) == (0.9, 3101, False)
    assert "stream" not in Decoding(stream=False).model_dump()  # never part of a run's identity


def test_budget_and_attempts_in_the_prompt():
    e = env("raw", budget=6)
    first = user(e.reset().messages)
    assert '"max_retries": 5' in first and '"max_leaf_calls_per_task": 6' in first and "- attempt: 0" in first
    e.submit(TextAnswer(text="no"))
    assert "- attempt: 1" in user(e.retry_messages())


def test_the_parametric_suite_plays_the_protocol(tmp_path):
    suite = TextWorld()
    opts = suite.options_model(
        protocol="veriharness", seeds="5", rooms=2, objects=2, quest_length=1, cache_dir=str(tmp_path)
    )
    (task,) = suite.tasks(opts)
    entry = suite.entry(5, opts)
    ctx = _ctx("allowed_prose")
    e = Played(suite.make(task, opts, ctx), ctx)
    first = user(e.reset().messages)
    assert '"task_id": "textworld-5"' in first and json.dumps(entry.objective)[1:-1] in first
    e.submit(
        TextAnswer(
            text=json.dumps(
                {
                    "task_id": "textworld-5",
                    "answer": json.dumps({"commands": ["go wesst"]}),
                    "artifacts": ["action_plan.json"],
                }
            )
        )
    )
    assert json.dumps(entry.initial_admissible[:12])[:240] in e.feedback[1]
    win = {
        "task_id": "textworld-5",
        "answer": json.dumps({"commands": entry.walkthrough}),
        "artifacts": ["action_plan.json"],
    }
    assert isinstance(e.submit(TextAnswer(text=json.dumps(win))), Accepted)


def test_parse_leaf_keeps_the_artifacts_lax_rules():
    assert parse_leaf('{"task_id": "t", "answer": "x", "done": "yes"}', "t").leaf.done is True
    bad = parse_leaf('{"task_id": 7, "answer": "x"}', "t")
    assert bad.parse_error and bad.leaf.task_id == "t" and bad.leaf.answer == ""
