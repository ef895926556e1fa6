"""Where engine rows come from: live engines over HTTP, or a recording replayed offline."""
