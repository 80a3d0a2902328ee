"""What reads a run directory back for a person or another tool: one episode's transcript
(`transcripts`), the inspect_ai log (`inspect_log`, `inspect_messages`), the demo page
(`demo_page`) and how many of a fork's continuations reproduce their source's (`fork_check`)."""
