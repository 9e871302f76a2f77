ALTER TABLE `instances` ADD `spec` text;--> statement-breakpoint
ALTER TABLE `replacements` ADD `attempts` text;