"""The official OpenAI Python SDK's `AzureOpenAI` client against `agentstream serve
clients/script.json`: the Responses checks of responses_check.py, with the client
posting as Azure does (`POST {HOST}/openai/v1/responses?api-version=v1`, the key in
`api-key`)."""

import os
import sys

from openai import AzureOpenAI

import harness
import responses_check
from responses_check import (  # noqa: F401 - the checks harness.run finds
    test_1_streaming_tool_call,
    test_2_streaming_answer_after_tool_result,
    test_3_tool_call_without_streaming,
    test_4_answer_without_streaming,
)

HOST = harness.URL[: -len("/v1")] if harness.URL.endswith("/v1") else harness.URL
responses_check.API = "azure-openai-responses"
responses_check.client = AzureOpenAI(
    base_url=HOST + "/openai/v1",
    api_key=os.environ.get("AGENTSTREAM_KEY", "not-needed"),
    api_version="v1",
)

if __name__ == "__main__":
    harness.run(sys.modules[__name__])
