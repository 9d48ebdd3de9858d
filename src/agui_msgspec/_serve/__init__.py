"""The producer side: the strict writer, the streaming response and the guard."""
