"""Same prompt, same answer on the embedded server, whatever request came before it."""

import openai
import pytest

from envs import get_suite
from envs.contract import EpisodeContext
from harness.serving.backends.prompt_tools import with_tools_prompt
from harness.serving.llama.local import LocalServer, local_model_name

pytestmark = [pytest.mark.slow, pytest.mark.extra("local")]


def test_answer_does_not_depend_on_the_previous_request():
    suite = get_suite("bank-disputes")
    options = suite.options_model()
    opening = suite.make(suite.tasks(options)[0], options, EpisodeContext(budget=4)).reset()
    first = with_tools_prompt(opening.messages, opening.tools)
    # a conversation that holds the first prompt as its prefix: llama-cpp-python would otherwise
    # re-evaluate only the last token of `first` and answer differently
    longer = [
        *first,
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "Your previous call failed. Try again."},
    ]
    with LocalServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="none")

        def ask(messages):
            r = client.chat.completions.create(
                model=local_model_name("prompt"), messages=messages, temperature=0, max_tokens=24
            )
            return r.choices[0].message.content

        a = ask(first)
        ask(longer)
        assert ask(first) == a
