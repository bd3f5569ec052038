//! What the bot says, in the four languages of the console. The language is the Telegram
//! user's (`language_code`), else the site's (`Language`). Templates are plain text with `{0}`,
//! `{1}`... placeholders; [`render`] escapes them for MarkdownV2 and inserts the arguments.

use super::{esc, esc_code};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    ZhCn,
    ZhHk,
    Ja,
}

impl Lang {
    /// A Telegram `language_code` (IETF: `zh-hans`, `zh-hant`, `ja`, `en-US`) or a console
    /// language (`zh_CN`, `zh_HK`, `ja`, `en`).
    pub fn parse(code: &str) -> Option<Lang> {
        let c = code.trim().to_ascii_lowercase().replace('_', "-");
        if c.starts_with("zh") {
            let traditional = ["hant", "hk", "tw", "mo"].iter().any(|t| c.contains(t));
            Some(if traditional { Lang::ZhHk } else { Lang::ZhCn })
        } else if c.starts_with("ja") {
            Some(Lang::Ja)
        } else if c.starts_with("en") {
            Some(Lang::En)
        } else {
            None
        }
    }

    /// The language of a message from `user_code` on a site whose language is `site`.
    pub fn of(user_code: Option<&str>, site: &str) -> Lang {
        user_code
            .and_then(Lang::parse)
            .or_else(|| Lang::parse(site))
            .unwrap_or(Lang::En)
    }

    fn pick(self, t: [&'static str; 4]) -> &'static str {
        t[self as usize]
    }
}

/// Declares [`Msg`], one variant per line with its text in each language (English, Simplified
/// Chinese, Traditional Chinese, Japanese; the order of [`Lang`]), and [`Msg::ALL`].
macro_rules! messages {
    ($($m:ident => $texts:expr,)*) => {
        /// Everything the bot says besides data.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Msg {
            $($m,)*
        }

        impl Msg {
            /// Every message (the test that each language has each placeholder walks it).
            pub const ALL: &'static [Msg] = &[$(Msg::$m,)*];

            /// The texts of the message, in the order of [`Lang`].
            fn texts(self) -> [&'static str; 4] {
                match self {
                    $(Msg::$m => $texts,)*
                }
            }
        }
    };
}

messages! {
    NotBound => [
        "This Telegram account is not bound to an account yet: send /bind.",
        "此 Telegram 账号尚未绑定本站账号：请发送 /bind。",
        "此 Telegram 帳號尚未綁定本站帳號：請發送 /bind。",
        "この Telegram アカウントはまだ連携されていません：/bind を送信してください。",
    ],
    UseHelp => [
        "Send /help to see what I can do.",
        "发送 /help 查看可用命令。",
        "發送 /help 查看可用指令。",
        "/help で使えるコマンドを確認できます。",
    ],
    PrivateOnly => [
        "Please talk to me in a private chat for that.",
        "请在与机器人的私聊中使用此命令。",
        "請在與機械人的私人對話中使用此指令。",
        "このコマンドはボットとの個別チャットで使ってください。",
    ],
    Cancelled => ["Cancelled.", "已取消。", "已取消。", "キャンセルしました。"],
    AskToken => [
        "Send me your access token (Profile → Access token on the site), or /cancel.",
        "请发送你的访问令牌（本站 个人设置 → 访问令牌），或发送 /cancel 取消。",
        "請發送你的存取令牌（本站 個人設定 → 存取令牌），或發送 /cancel 取消。",
        "アクセストークン（サイトのプロフィール → アクセストークン）を送信してください。/cancel で中止します。",
    ],
    Bound => [
        "Bound to {0}. Your message with the token was deleted.",
        "已绑定到 {0}。含令牌的消息已删除。",
        "已綁定到 {0}。含令牌的訊息已刪除。",
        "{0} と連携しました。トークンを含むメッセージは削除しました。",
    ],
    Taken => [
        "This Telegram account is bound to another account: /unbind it there first.",
        "此 Telegram 账号已绑定其他账号：请先用该账号 /unbind 解绑。",
        "此 Telegram 帳號已綁定其他帳號：請先用該帳號 /unbind 解除綁定。",
        "この Telegram アカウントは別のアカウントと連携済みです：先にそちらで /unbind してください。",
    ],
    Disabled => [
        "That account is disabled.",
        "该账号已被禁用。",
        "該帳號已被停用。",
        "そのアカウントは無効化されています。",
    ],
    InvalidToken => [
        "That access token is not valid: generate one under Profile → Access token and /bind again.",
        "访问令牌无效：请在 个人设置 → 访问令牌 中生成后重新 /bind。",
        "存取令牌無效：請在 個人設定 → 存取令牌 中產生後重新 /bind。",
        "アクセストークンが無効です：プロフィール → アクセストークンで発行し、もう一度 /bind してください。",
    ],
    Failed => [
        "Something went wrong; try again later.",
        "出错了，请稍后再试。",
        "出錯了，請稍後再試。",
        "エラーが発生しました。しばらくしてからもう一度お試しください。",
    ],
    Unbound => [
        "Unbound from {0}.",
        "已解除与 {0} 的绑定。",
        "已解除與 {0} 的綁定。",
        "{0} との連携を解除しました。",
    ],
    Balance => [
        "{0}\nBalance: {1}\nUsed: {2}\nRequests: {3}",
        "{0}\n余额：{1}\n已用：{2}\n请求次数：{3}",
        "{0}\n餘額：{1}\n已用：{2}\n請求次數：{3}",
        "{0}\n残高：{1}\n使用済み：{2}\nリクエスト数：{3}",
    ],
    AskCode => [
        "Send me the redemption code, or /cancel.",
        "请发送兑换码，或发送 /cancel 取消。",
        "請發送兌換碼，或發送 /cancel 取消。",
        "引き換えコードを送信してください。/cancel で中止します。",
    ],
    ToppedUp => [
        "Topped up {0}. Balance: {1}",
        "充值成功：{0}。当前余额：{1}",
        "增值成功：{0}。目前餘額：{1}",
        "{0} をチャージしました。残高：{1}",
    ],
    CodeInvalid => [
        "Not topped up: the code is invalid or has already been used.",
        "充值失败：兑换码无效或已被使用。",
        "增值失敗：兌換碼無效或已被使用。",
        "チャージできません：コードが無効か、使用済みです。",
    ],
    NotToppedUp => [
        "Not topped up: {0}",
        "充值失败：{0}",
        "增值失敗：{0}",
        "チャージできません：{0}",
    ],
    NoKeys => [
        "You have no API keys yet: create one on the site.",
        "你还没有令牌：请在本站创建。",
        "你還沒有令牌：請在本站建立。",
        "API キーがまだありません：サイトで作成してください。",
    ],
    KeysTitle => [
        "API keys ({0}/{1})",
        "令牌（{0}/{1}）",
        "令牌（{0}/{1}）",
        "API キー（{0}/{1}）",
    ],
    Remaining => ["remaining {0}", "剩余 {0}", "剩餘 {0}", "残り {0}"],
    Unlimited => ["unlimited", "无限", "無限", "無制限"],
    KeyGone => [
        "That key is gone.",
        "该令牌已不存在。",
        "該令牌已不存在。",
        "そのキーはもうありません。",
    ],
    KeyUnavailable => [
        "This key cannot be shown again: create a new one on the site.",
        "该令牌无法再次显示：请在本站新建一个。",
        "該令牌無法再次顯示：請在本站新建一個。",
        "このキーは再表示できません：サイトで新しく作成してください。",
    ],
    InviteCode => [
        "Your invite code: {0}",
        "你的邀请码：{0}",
        "你的邀請碼：{0}",
        "あなたの招待コード：{0}",
    ],
    InviteLink => [
        "Your invite link:\n{0}",
        "你的邀请链接：\n{0}",
        "你的邀請連結：\n{0}",
        "あなたの招待リンク：\n{0}",
    ],
    Unknown => [
        "Unknown command. Send /help to see what I can do.",
        "未知命令。发送 /help 查看可用命令。",
        "未知指令。發送 /help 查看可用指令。",
        "不明なコマンドです。/help で使えるコマンドを確認できます。",
    ],
    Enabled => ["enabled", "已启用", "已啟用", "有効"],
    KeyDisabled => ["disabled", "已禁用", "已停用", "無効"],
    Expired => ["expired", "已过期", "已過期", "期限切れ"],
    Exhausted => ["used up", "已耗尽", "已用盡", "使い切り"],
}

/// The template of `m` in `lang` (plain text; `{n}` placeholders).
pub fn template(lang: Lang, m: Msg) -> &'static str {
    lang.pick(m.texts())
}

/// A built-in command's description in `lang`.
pub fn command_description(lang: Lang, command: &str) -> &'static str {
    lang.pick(match command {
        "bind" => [
            "Bind your account (with its access token)",
            "绑定账号（使用访问令牌）",
            "綁定帳號（使用存取令牌）",
            "アカウントを連携（アクセストークンで）",
        ],
        "unbind" => [
            "Unbind your account",
            "解除账号绑定",
            "解除帳號綁定",
            "アカウント連携を解除",
        ],
        "balance" => ["Your balance", "查询余额", "查詢餘額", "残高を確認"],
        "recharge" => [
            "Top up with a redemption code",
            "使用兑换码充值",
            "使用兌換碼增值",
            "引き換えコードでチャージ",
        ],
        "apikey" => ["Your API keys", "我的令牌", "我的令牌", "API キー一覧"],
        "aff" => [
            "Your invite link",
            "我的邀请链接",
            "我的邀請連結",
            "招待リンク",
        ],
        "help" => ["What this bot does", "帮助", "說明", "ヘルプ"],
        "cancel" => [
            "Cancel the current step",
            "取消当前操作",
            "取消目前操作",
            "現在の操作を中止",
        ],
        _ => ["Start", "开始", "開始", "開始"],
    })
}

/// An argument of a message.
pub enum Arg<'a> {
    /// Plain text (escaped).
    Text(&'a str),
    /// Bold text.
    Bold(&'a str),
    /// A code span (a key, a link to copy).
    Code(&'a str),
}

/// `m` in `lang` as MarkdownV2, with `args` in its placeholders.
pub fn render(lang: Lang, m: Msg, args: &[Arg<'_>]) -> String {
    let t = template(lang, m);
    let mut out = String::with_capacity(t.len() + 16);
    let mut rest = t;
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}').map(|c| open + c) else {
            break;
        };
        let Ok(n) = rest[open + 1..close].parse::<usize>() else {
            out.push_str(&esc(&rest[..=close]));
            rest = &rest[close + 1..];
            continue;
        };
        out.push_str(&esc(&rest[..open]));
        match args.get(n) {
            Some(Arg::Text(s)) => out.push_str(&esc(s)),
            Some(Arg::Bold(s)) => {
                out.push('*');
                out.push_str(&esc(s));
                out.push('*');
            }
            Some(Arg::Code(s)) => {
                out.push('`');
                out.push_str(&esc_code(s));
                out.push('`');
            }
            None => {}
        }
        rest = &rest[close + 1..];
    }
    out.push_str(&esc(rest));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_follow_the_user_then_the_site() {
        assert_eq!(Lang::of(Some("zh-hans"), "en"), Lang::ZhCn);
        assert_eq!(Lang::of(Some("zh-hant"), "en"), Lang::ZhHk);
        assert_eq!(Lang::of(Some("ja"), "zh_CN"), Lang::Ja);
        assert_eq!(Lang::of(Some("de"), "zh_HK"), Lang::ZhHk);
        assert_eq!(Lang::of(None, "zh_CN"), Lang::ZhCn);
        assert_eq!(Lang::of(None, "fr"), Lang::En);
    }

    #[test]
    fn templates_are_escaped_and_filled() {
        assert_eq!(
            render(Lang::En, Msg::Bound, &[Arg::Bold("a_b")]),
            "Bound to *a\\_b*\\. Your message with the token was deleted\\."
        );
        assert_eq!(
            render(
                Lang::ZhCn,
                Msg::InviteLink,
                &[Arg::Code("https://x/r?aff=1")]
            ),
            "你的邀请链接：\n`https://x/r?aff=1`"
        );
        assert_eq!(
            render(Lang::En, Msg::KeysTitle, &[Arg::Text("1"), Arg::Text("2")]),
            "API keys \\(1/2\\)"
        );
    }

    #[test]
    fn every_message_has_its_placeholders_in_every_language() {
        for &m in Msg::ALL {
            let holes = |l: Lang| {
                (0..4)
                    .filter(|n| template(l, m).contains(&format!("{{{n}}}")))
                    .count()
            };
            let en = holes(Lang::En);
            for l in [Lang::ZhCn, Lang::ZhHk, Lang::Ja] {
                assert_eq!(holes(l), en, "{m:?} in {l:?}");
                assert!(!template(l, m).is_empty());
            }
        }
    }
}
