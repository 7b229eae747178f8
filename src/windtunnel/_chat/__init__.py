"""The chat-completions seam shared by the gateway and the tape modes: requests, replies, wire shapes."""
