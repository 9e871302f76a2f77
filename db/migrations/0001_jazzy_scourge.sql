ALTER TABLE `wakes` ADD `drop_reason` text;--> statement-breakpoint
ALTER TABLE `wakes` ADD `attempts` integer DEFAULT 0 NOT NULL;