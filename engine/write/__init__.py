"""The governed write path: capture, phone clips and the self-probe."""
