"""Travel domain of the tool suites: flights, seats, bookings."""
