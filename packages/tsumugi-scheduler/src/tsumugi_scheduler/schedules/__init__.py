"""Recurring schedules: the Scheduler Durable Object's store, host and routing (issue 12, ADR-0079)."""
