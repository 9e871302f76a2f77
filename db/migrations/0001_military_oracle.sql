CREATE INDEX `events_dropped` ON `events` (`created_at`) WHERE status = 'dropped';--> statement-breakpoint
CREATE INDEX `wakes_consumed` ON `wakes` (`agent_id`,`consumed_by_run`);--> statement-breakpoint
CREATE INDEX `wakes_recent` ON `wakes` (`agent_id`,`id`);--> statement-breakpoint
CREATE INDEX `instance_events_event` ON `instance_events` (`agent_id`,`event_id`);--> statement-breakpoint
CREATE INDEX `notifications_recent` ON `notifications` (`agent_id`,`id`);--> statement-breakpoint
CREATE INDEX `deliveries_finished` ON `deliveries` (`created_at`) WHERE status in ('delivered', 'failed');