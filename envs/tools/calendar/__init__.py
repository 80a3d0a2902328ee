"""Calendar domain of the tool suites: meetings, rooms, time zones."""
