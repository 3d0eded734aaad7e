//! `clarify serve`'s flags for telling people: webhooks, ntfy, Slack and
//! Telegram (issue 28), Discord (issue 48).

use clap::Args;

/// Where notices go.
#[derive(Debug, Clone, Default, Args)]
pub struct NotifyArgs {
    /// Tell this webhook (a JSON POST, with a `text` line for Slack or
    /// Mattermost) when a question waits, is answered or expires, and
    /// before it expires (repeat the flag, or separate with commas in the
    /// variable). Each workspace's owner may add one of their own.
    #[arg(
        long = "notify-webhook",
        value_name = "URL",
        env = "CLARIFY_NOTIFY_WEBHOOKS",
        value_delimiter = ','
    )]
    pub notify_webhooks: Vec<String>,

    /// Publish the same notices to this ntfy topic (`https://ntfy.sh/your-topic`)
    /// for your phone, with a button per option that answers in one tap
    /// (repeat the flag, or separate with commas in the variable).
    #[arg(
        long = "notify-ntfy",
        value_name = "TOPIC_URL",
        env = "CLARIFY_NOTIFY_NTFY",
        value_delimiter = ','
    )]
    pub notify_ntfy: Vec<String>,

    /// The access token to publish to ntfy with, for a protected topic.
    #[arg(
        long = "ntfy-token",
        value_name = "TOKEN",
        env = "CLARIFY_NTFY_TOKEN",
        hide_env_values = true
    )]
    pub ntfy_token: Option<String>,

    /// Post waiting questions to Slack as this app's bot (`xoxb-…`), with a
    /// button per option; needs `--slack-channel`, and `--slack-app-token`
    /// or `--slack-signing-secret` for the presses.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "CLARIFY_SLACK_BOT_TOKEN",
        hide_env_values = true
    )]
    pub slack_bot_token: Option<String>,

    /// The Slack app's signing secret: button presses
    /// (`/api/v1/integrations/slack/interactions`) are checked with it.
    #[arg(
        long,
        value_name = "SECRET",
        env = "CLARIFY_SLACK_SIGNING_SECRET",
        hide_env_values = true
    )]
    pub slack_signing_secret: Option<String>,

    /// The Slack app's app-level token (`xapp-…`, scope `connections:write`):
    /// button presses come over Socket Mode, a WebSocket Clarify opens
    /// itself, so the server needs no public URL (and no signing secret).
    #[arg(
        long,
        value_name = "TOKEN",
        env = "CLARIFY_SLACK_APP_TOKEN",
        hide_env_values = true
    )]
    pub slack_app_token: Option<String>,

    /// The Slack channel to post to (its id, `C0123…`).
    #[arg(long, value_name = "CHANNEL", env = "CLARIFY_SLACK_CHANNEL")]
    pub slack_channel: Option<String>,

    /// Slack's Web API base URL.
    #[arg(
        long,
        value_name = "URL",
        env = "CLARIFY_SLACK_API_URL",
        default_value = "https://slack.com/api"
    )]
    pub slack_api_url: String,

    /// Send waiting questions to Telegram as this bot (from @BotFather),
    /// with a button per option; needs `--telegram-chat-id`. Presses and
    /// replies are fetched with `getUpdates` (no public URL needed), or
    /// sent to a webhook with `--telegram-webhook-secret`.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "CLARIFY_TELEGRAM_BOT_TOKEN",
        hide_env_values = true
    )]
    pub telegram_bot_token: Option<String>,

    /// The Telegram chat to send to (a group's id is negative,
    /// `-1001234567890`).
    // A group's id starts with `-`; without this clap takes it for a flag.
    #[arg(
        long,
        value_name = "CHAT_ID",
        env = "CLARIFY_TELEGRAM_CHAT_ID",
        allow_negative_numbers = true
    )]
    pub telegram_chat_id: Option<String>,

    /// The secret Telegram sends with each update (give the same to
    /// `setWebhook` as `secret_token`); without it the bot polls instead,
    /// removing any webhook set on it.
    #[arg(
        long,
        value_name = "SECRET",
        env = "CLARIFY_TELEGRAM_WEBHOOK_SECRET",
        hide_env_values = true
    )]
    pub telegram_webhook_secret: Option<String>,

    /// Telegram's Bot API base URL.
    #[arg(
        long,
        value_name = "URL",
        env = "CLARIFY_TELEGRAM_API_URL",
        default_value = "https://api.telegram.org"
    )]
    pub telegram_api_url: String,

    /// Post waiting questions to Discord as this bot, with a button per
    /// option, pressed over the gateway Clarify connects to (no inbound
    /// port); needs `--discord-channel`.
    #[arg(
        long,
        value_name = "TOKEN",
        env = "CLARIFY_DISCORD_BOT_TOKEN",
        hide_env_values = true
    )]
    pub discord_bot_token: Option<String>,

    /// The Discord channel to post to (its id, digits).
    #[arg(long, value_name = "ID", env = "CLARIFY_DISCORD_CHANNEL")]
    pub discord_channel: Option<String>,

    /// Discord's REST API base URL.
    #[arg(
        long,
        value_name = "URL",
        env = "CLARIFY_DISCORD_API_URL",
        default_value = "https://discord.com/api/v10"
    )]
    pub discord_api_url: String,
}
