"""Turns shared by the tests (Pi assistant messages, short forms)."""

WEATHER_CALL = {
    "role": "assistant",
    "stopReason": "toolUse",
    "content": [{"type": "toolCall", "id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}],
}
