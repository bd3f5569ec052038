//! Start-up set-up: the root user, the default group, the built-in model owners, the sealing of
//! secrets at rest, and the settings snapshot.

use crate::auth;
use crate::error::ApiResult;
use crate::AppState;
use switchboard_domain::user::{Role, UserStatus};
use switchboard_store::users::NewUser;
use switchboard_store::{model_owners, now, prices, user_groups, users};

/// What start-up did, for the log.
#[derive(Debug, Default)]
pub struct Bootstrap {
    /// Set when root was created with a generated password: printed once, never stored in clear.
    pub generated_root_password: Option<String>,
    pub root_created: bool,
}

/// Creates `root` when the database has no user yet (with `initial_password`, or a generated one
/// returned to the caller to print once), applies `initial_access_token` to root when given (so
/// scripts and tests can drive a fresh instance), seeds the default group and the built-in model
/// owners, seals the secrets still stored in clear or under a previous server secret
/// ([`crate::at_rest::seal_stored_secrets`]), and loads the settings snapshot.
pub async fn run(
    state: &AppState,
    initial_password: Option<String>,
    initial_access_token: Option<String>,
) -> ApiResult<Bootstrap> {
    let cost = state.config.bcrypt_cost;
    let result = state
        .db(move |c| {
            switchboard_store::transaction(c, |c| {
                user_groups::seed_default(c)?;
                model_owners::seed_built_in(c)?;
                let t = now();
                let defaults: Vec<prices::PriceFields> =
                    switchboard_domain::price::default_prices()
                        .into_iter()
                        .map(|p| prices::PriceFields {
                            model: p.model,
                            price_type: p.price_type.to_string(),
                            channel_type: p.channel_type,
                            input: p.input,
                            output: p.output,
                            extra_ratios: p.extra.to_json(),
                            locked: p.locked,
                            updated_at: t,
                            max_output_tokens: p.max_output,
                        })
                        .collect();
                prices::seed_missing(c, &defaults)?;
                let mut out = Bootstrap::default();
                if users::count(c)? == 0 {
                    let (password, generated) = match initial_password.filter(|p| !p.is_empty()) {
                        Some(p) => (p, false),
                        None => (auth::random_string(16), true),
                    };
                    let hash = auth::hash_password(&password, cost)?;
                    let aff = auth::random_string(8);
                    let t = now();
                    users::insert(
                        c,
                        &NewUser {
                            username: "root",
                            password: &hash,
                            display_name: "Root User",
                            role: Role::Root.as_i32(),
                            status: UserStatus::Enabled.as_i32(),
                            email: "",
                            quota: 100_000_000,
                            group_name: "default",
                            aff_code: Some(&aff),
                            inviter_id: 0,
                            created_at: t,
                            updated_at: t,
                        },
                    )?;
                    out.root_created = true;
                    if generated {
                        out.generated_root_password = Some(password);
                    }
                }
                if let Some(token) = initial_access_token.filter(|t| !t.is_empty()) {
                    let root = users::list(
                        c,
                        &users::UserFilter {
                            role: Some(Role::Root.as_i32()),
                            ..Default::default()
                        },
                        "id",
                        switchboard_store::PageReq { page: 1, size: 1 },
                    )?;
                    if let Some(root) = root.items.first() {
                        users::set_access_token_hash(c, root.id, Some(&auth::sha256_hex(&token)))?;
                    }
                }
                Ok(out)
            })
        })
        .await?;
    crate::at_rest::seal_stored_secrets(state).await?;
    state.reload_settings().await?;
    state.relay.reload_pricing(state).await?;
    state.relay.reload_channels(state).await?;
    Ok(result)
}
