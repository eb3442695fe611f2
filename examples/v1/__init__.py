"""The v1 examples: an echo agent and a client on the generated `acp_v1` toolkit."""
