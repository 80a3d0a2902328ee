"""The artifact's fixed strings: stimuli of the study, quoted verbatim as data.

Source: github.com/jaideepray1989/veriharness at commit 929868ac9d29162a9083aaa5422c0f58a32f93b1,
files under output/artifact/veriharness-agenticdev2026-anonymous/source_snapshot/ (and
veriharness/benchmarks/textworld_bridge.py, veriharness/gates/artifact_gate.py and
veriharness/gates/llm_verifier_gate.py of the repository). The file each string was quoted from
is named beside it. Only the strings are taken; how they are assembled is our own code
(envs.textworld.veriharness.prompt / .feedback / .gates), checked byte for byte against the
artifact's recorded requests in tests/data/paper-goldens/.
"""

from __future__ import annotations

from envs import study

# --- veriharness/llm/local_client.py: the system message of every request
SYSTEM = "Return only LeafOutput JSON."

# --- veriharness/leaves/prompts.py (render_leaf_prompt): the worker rules around the claims line
PREAMBLE_HEAD = (
    "You are a bounded worker.\n\nYou do not decide final acceptance.\nReturn only the requested structured output."
)
CLAIMS_NOT_REQUIRED = (
    "This task does not require evidence claims: return an empty claims array unless a claim is necessary."
)
PREAMBLE_TAIL = (
    "List artifacts explicitly.\nState risks separately from the answer.\nDo not include markdown fences.\n"
    "Do not include explanatory text outside the JSON object."
)
CONTEXT_PACK_HEADER = "Context pack:"

# --- veriharness/leaves/prompts.py (_family_guidance, family "textworld")
TEXTWORLD_GUIDANCE = (
    "For this textworld task:\n"
    "- Solve the visible objective using a compact sequence of text-game commands.\n"
    '- The LeafOutput.answer field must itself be JSON like {"commands":["go north","open chest"]}.\n'
    "- Use at most the command budget in the context pack.\n"
    "- Commands are evaluated from the initial game state in order.\n"
    "- Do not include markdown fences inside the answer field.\n"
    '- List "action_plan.json" in artifacts.'
)

# --- veriharness/leaves/prompts.py (_attempt_guidance / _strategy_guidance); one candidate per
# attempt in the paper's lane, so always candidate-0 and its strategy (index 0)
ATTEMPT_HEADER = "Attempt metadata:"
CANDIDATE_ID = "candidate-0"
TEXTWORLD_STRATEGY = "Follow the objective in its stated order and produce only the commands needed for those steps."
NO_REPEAT = "Do not repeat a previous failing answer when repair feedback is present."

# --- veriharness/leaves/prompts.py (_repair_guidance)
REPAIR_HEADER = "Repair guidance from external gates:"
REPAIR_TAIL = (
    "Treat every repair item as a hard requirement for this attempt.",
    "For code repairs, change the algorithm when the failure is semantic; do not merely reformat the same code.",
    "If a failing assert is shown, identify which behavior it demands and update the implementation to satisfy "
    "that case and the general rule behind it.",
    "Return the full LeafOutput JSON object again, not only the nested answer JSON.",
)

# --- veriharness/benchmarks/textworld.py (generate_textworld_tasks): the task's fixed texts
TASK_ID_PREFIX = "textworld-"
TASK_DESCRIPTION = "Complete the visible TextWorld objective with a bounded command plan."
REQUIRED_ARTIFACT = "action_plan.json"

# --- veriharness/core/context_pack.py (build_context_pack, family "textworld")
TASK_FAMILY = "textworld"
ACCEPTED_FACTS = ("The TextWorld environment validates command admissibility and terminal quest completion.",)
CONSTRAINTS = (
    "Return a JSON command plan in the LeafOutput.answer field.",
    "Use no more than the stated command budget.",
    "List action_plan.json in artifacts.",
)

# --- scripts/run_reviewer_extension.py (_config) over veriharness/core/types.py (BudgetConfig):
# the budget dict of the context pack, in BudgetConfig's field order; a budget B gives
# max_retries B-1 and max_leaf_calls_per_task B
VERIHARNESS_K = 2
MAX_TOKENS_PER_TASK = 8000
MAX_WALL_TIME_SECONDS = 172800

# --- the output schema embedded in the context pack: pydantic's LeafOutput.model_json_schema()
# as the artifact's run printed it (pydantic 2.14; veriharness/core/types.py). Fixed text: it is
# not regenerated from whatever pydantic is installed here.
OUTPUT_SCHEMA_JSON = (
    '{"$defs": {"Claim": {"properties": {"claim": {"title": "Claim", "type": "string"}, "evidence_refs": '
    '{"items": {"$ref": "#/$defs/EvidenceRef"}, "title": "Evidence Refs", "type": "array"}, "confidence": '
    '{"default": 0.5, "title": "Confidence", "type": "number"}, "metadata": {"additionalProperties": true, '
    '"title": "Metadata", "type": "object"}}, "required": ["claim"], "title": "Claim", "type": "object"}, '
    '"EvidenceRef": {"properties": {"source": {"title": "Source", "type": "string"}, "locator": {"default": "", '
    '"title": "Locator", "type": "string"}, "quote": {"default": "", "title": "Quote", "type": "string"}, '
    '"metadata": {"additionalProperties": true, "title": "Metadata", "type": "object"}}, "required": ["source"], '
    '"title": "EvidenceRef", "type": "object"}}, "properties": {"task_id": {"title": "Task Id", "type": "string"}, '
    '"answer": {"title": "Answer", "type": "string"}, "artifacts": {"items": {"type": "string"}, "title": '
    '"Artifacts", "type": "array"}, "claims": {"items": {"$ref": "#/$defs/Claim"}, "title": "Claims", "type": '
    '"array"}, "self_assessment": {"additionalProperties": true, "title": "Self Assessment", "type": "object"}, '
    '"done": {"default": false, "title": "Done", "type": "boolean"}}, "required": ["task_id", "answer"], "title": '
    '"LeafOutput", "type": "object"}'
)

# --- veriharness/core/types.py (HarnessVariant): the variant names, keyed by our condition
# names; kept with the study's other constants
VARIANTS = study.VARIANT_NAMES

# --- gate messages. veriharness/gates/schema_gate.py
MSG_TASK_ID_MISMATCH = "Output task_id does not match task."
MSG_SCHEMA_INVALID = "Leaf output could not be parsed as valid structured output."
MSG_CLIENT_ERROR = "Leaf client failed before producing structured output."
MSG_EMPTY_ANSWER = "Leaf answer is empty."
# veriharness/gates/artifact_gate.py
MSG_ARTIFACT_MISSING = "Required artifact not listed: {artifact}"
# veriharness/gates/llm_verifier_gate.py (a soft gate: it never blocks acceptance)
MSG_VERIFIER_RISK = "Verifier found unsupported-risk marker."
VERIFIER_RISK_MARKER = "unsupported"
# veriharness/benchmarks/oracles.py (textworld_oracle)
MSG_PLAN_INVALID = "The answer must be JSON with a commands list of strings."
EXPECTED_PLAN_INVALID = "a list of TextWorld command strings"
# veriharness/benchmarks/textworld_bridge.py (evaluate_plan)
MSG_COMMAND_MISSING = "The action plan did not include a command."
EXPECTED_COMMAND_MISSING = "at least one command"
MSG_TURN_BUDGET = "The action plan has {n} commands but the episode budget is {max_steps}."
EXPECTED_TURN_BUDGET = "at most {max_steps} commands"
MSG_ACTION_INVALID = "Command {index} is not admissible in the current game state."
MSG_GAME_LOST = "The game ended before the objective was completed."
EXPECTED_GAME_LOST = "a command sequence that completes the objective"
MSG_QUEST_INCOMPLETE = "The submitted commands were valid but did not complete the objective."
EXPECTED_QUEST_INCOMPLETE = "a command sequence that completes the visible objective"
LOCATION_COMMANDS = "LeafOutput.answer.commands"

# --- veriharness/core/repair_policy.py (_failure_location / _failure_expected defaults)
LOCATION_LEAF = "LeafOutput"
LOCATION_ARTIFACTS = "LeafOutput.artifacts"
EXPECTED_EMPTY_ANSWER = "non-empty answer string"
EXPECTED_DEFAULT = "gate pass"

# --- veriharness/core/repair_policy.py: the retry lines of the four policies
RAW_HEADER = (
    "Previous attempt failed acceptance checks. Try again with a complete valid answer.",
    "Keep the requested output schema and artifacts, and do not add prose outside the structured output.",
)
RAW_ITEM = "Raw validation message from {gate}: {message}"
TYPED_HEADER = "Previous attempt failed typed validation. Repair the listed typed fields."
TYPED_ITEM_PREFIX = "typed_failure="
NATURAL_HEADER = "The previous attempt failed validation. Return one complete corrected LeafOutput JSON object."
NATURAL_ITEM = "The rejected value was at {location}. The validator observed {observed}. It expected {expected}."
ECHO = "Previous answer was rejected: {answer}"
NATURAL_ECHO = "The previous answer was rejected: {answer}"
# repair_policy._short's default limit, which also cut the echoed answer (the study's 240)
CUT = study.CUT


def value_cut(run_cut: int | None) -> int:
    """The cut of every feedback value: the artifact's 240 characters, unless the run sets one."""
    return run_cut if run_cut is not None else CUT
