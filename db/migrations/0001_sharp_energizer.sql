ALTER TABLE `wakes` ADD `drop_reason` text;--> statement-breakpoint
ALTER TABLE `wakes` ADD `attempts` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `breakers` ADD `misconfigured` text;