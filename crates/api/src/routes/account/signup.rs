//! Registration with a username and password (`POST /api/user/register`).

use super::{
    check_email_domain, check_email_free, check_username_free, create_account, invalid_code,
    user_json, Account, Code, PURPOSE_REGISTER,
};
use crate::auth;
use crate::error::{ApiError, ApiResult};
use crate::extract::Body;
use crate::routes::check_critical;
use crate::AppState;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;
use switchboard_domain::validate;
use switchboard_domain::ErrorCode;

#[derive(Deserialize, schemars::JsonSchema)]
pub struct RegisterBody {
    username: String,
    password: String,
    #[serde(default)]
    display_name: String,
    #[serde(default)]
    email: String,
    #[serde(default)]
    verification_code: String,
    #[serde(default)]
    aff_code: String,
}

pub async fn register(
    state: web::Data<AppState>,
    req: HttpRequest,
    Body(body): Body<RegisterBody>,
) -> ApiResult<HttpResponse> {
    check_critical(&state, &req)?;
    crate::turnstile::check(&state, &req).await?;
    let reg = state.settings.registration();
    if !reg.enabled {
        return Err(ApiError::forbidden(
            ErrorCode::RegistrationClosed,
            "the administrator has closed new registrations",
        ));
    }
    if !reg.password {
        return Err(ApiError::forbidden(
            ErrorCode::PasswordRegistrationClosed,
            "registration with a password is closed; use another sign-in method",
        ));
    }
    validate::username(&body.username)?;
    validate::password(&body.password)?;
    validate::display_name(&body.display_name)?;
    let verify_email = reg.email_verification;
    if verify_email || !body.email.is_empty() {
        validate::email(&body.email)?;
    }
    if verify_email {
        if body.verification_code.is_empty() {
            return Err(ApiError::bad_request(
                ErrorCode::Required,
                "verification_code cannot be empty",
            ));
        }
        check_email_domain(&reg, &body.email)?;
    }
    let quota_new = reg.quota_for_new_user;
    let quota_invitee = reg.quota_for_invitee;
    let quota_inviter = reg.quota_for_inviter;
    let cost = state.config.bcrypt_cost;
    let (user, inviter_id) = state
        .db(move |c| {
            let hash = auth::hash_password(&body.password, cost)?;
            let code_hash = auth::sha256_hex(&body.verification_code);
            let code = Code {
                purpose: PURPOSE_REGISTER,
                email: &body.email,
                hash: &code_hash,
                wrong: invalid_code,
            };
            if verify_email {
                code.check(c)?;
            }
            switchboard_store::transaction(c, |c| {
                check_username_free(c, &body.username, 0)?;
                check_email_free(c, &body.email, 0)?;
                if verify_email {
                    code.take(c)?;
                }
                create_account(
                    c,
                    &Account {
                        username: &body.username,
                        password_hash: &hash,
                        display_name: &body.display_name,
                        email: &body.email,
                        aff_code: &body.aff_code,
                        quota_new,
                        quota_invitee,
                        quota_inviter,
                    },
                )
            })
        })
        .await?;
    // Committed: the inviter's reward reaches the relay's ledger at once (every node's, in
    // Redis mode).
    if let (Some(inviter), true) = (inviter_id, quota_inviter > 0) {
        state.relay.ledger.credit_user(inviter, quota_inviter).await;
    }
    tracing::info!(user_id = user.id, username = %user.username, "user registered");
    Ok(HttpResponse::Created()
        .json(json!({"success": true, "message": "", "data": user_json(&user)})))
}
