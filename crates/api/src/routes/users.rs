//! User administration (role >= admin): list, get, create, update, delete, manage and quota.

use super::account::{
    check_email_free, check_profile_edit, check_username_free, group_exists, load_user, user_json,
    user_not_found,
};
use super::paging::{self, found_or, Search};
use crate::auth::{self, AdminUser, CurrentUser};
use crate::error::{ok, ok_message, ApiError, ApiResult};
use crate::extract::Body;
use crate::AppState;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;
use switchboard_domain::log::LogType;
use switchboard_domain::quota;
use switchboard_domain::user::{may_manage, ManageAction, ManageDenied, Role, UserStatus};
use switchboard_domain::validate;
use switchboard_domain::ErrorCode;
use switchboard_store::users::{NewUser, UserChangeset, UserFilter, UserRow, ORDER_FIELDS};
use switchboard_store::{logs, now, sessions, tokens, users, DbConn};

paging::list_query! {
    #[schemars(rename = "UserListQuery")]
    pub struct ListQuery {
        /// one-api's name for the page (0-based there); accepted for old scripts.
        p: Option<i64>,
        group: Option<String>,
        role: Option<i32>,
        status: Option<i32>,
    }
}

pub async fn list(
    state: web::Data<AppState>,
    _admin: AdminUser,
    q: web::Query<ListQuery>,
) -> ApiResult<HttpResponse> {
    let mut q = q.into_inner();
    q.page = q.page.or(q.p.map(|p| p.saturating_add(1)));
    let s = Search::sorted(&mut q, ORDER_FIELDS, "-id")?;
    let group = q.group.filter(|g| !g.is_empty());
    paging::list(&state, s.page, user_json, move |c| {
        let filter = UserFilter {
            keyword: s.keyword(),
            group: group.as_deref(),
            role: q.role,
            status: q.status,
        };
        Ok(users::list(c, &filter, &s.order, s.page)?)
    })
    .await
}

pub async fn get(
    state: web::Data<AppState>,
    _admin: AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    paging::one(&state, user_json, move |c| load_user(c, id)).await
}

fn denied(d: ManageDenied) -> ApiError {
    let msg = match d {
        ManageDenied::TargetNotLower => "you can only manage users with a lower role than yours",
        ManageDenied::OnlyRootChangesAdmins => {
            "only the root user can make or remove administrators"
        }
        ManageDenied::RootIsProtected => "the root user cannot be changed this way",
        ManageDenied::NoSuchStep => {
            return ApiError::bad_request(
                ErrorCode::InvalidAction,
                "the user already has the highest or lowest role this action allows",
            )
        }
    };
    ApiError::forbidden(ErrorCode::Forbidden, msg)
}

/// An actor may edit a target's profile when it outranks the target (root is edited only by
/// itself, through `/api/user/self`).
fn check_outranks(actor: &CurrentUser, target: &UserRow) -> ApiResult<()> {
    may_manage(
        actor.role,
        Role::from_stored(target.role),
        ManageAction::Enable,
    )
    .map_err(denied)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "UserCreateBody")]
pub struct CreateBody {
    username: String,
    password: String,
    #[serde(default)]
    display_name: String,
    #[serde(default)]
    email: String,
    group: Option<String>,
    #[serde(default)]
    quota: i64,
    role: Option<i32>,
    #[serde(default)]
    remark: String,
}

pub async fn create(
    state: web::Data<AppState>,
    AdminUser(me): AdminUser,
    Body(body): Body<CreateBody>,
) -> ApiResult<HttpResponse> {
    validate::username(&body.username)?;
    validate::password(&body.password)?;
    validate::display_name(&body.display_name)?;
    if !body.email.is_empty() {
        validate::email(&body.email)?;
    }
    if body.quota < 0 {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidQuota,
            "quota cannot be negative",
        ));
    }
    let group = body
        .group
        .clone()
        .filter(|g| !g.is_empty())
        .unwrap_or_else(|| "default".into());
    validate::group_symbol(&group)?;
    let role = match body.role.unwrap_or(1) {
        1 => Role::Common,
        10 if me.role == Role::Root => Role::Admin,
        10 => {
            return Err(ApiError::forbidden(
                ErrorCode::Forbidden,
                "only the root user can create administrators",
            ))
        }
        _ => {
            return Err(ApiError::bad_request(
                ErrorCode::InvalidRole,
                "role must be 1 (user) or 10 (administrator)",
            ))
        }
    };
    let cost = state.config.bcrypt_cost;
    let user = state
        .db(move |c| {
            let hash = auth::hash_password(&body.password, cost)?;
            switchboard_store::transaction(c, |c| {
                if !group_exists(c, &group)? {
                    return Err(ApiError::bad_request(
                        ErrorCode::UnknownGroup,
                        format!("group {group:?} does not exist or is disabled"),
                    ));
                }
                check_username_free(c, &body.username, 0)?;
                check_email_free(c, &body.email, 0)?;
                let t = now();
                let display = if body.display_name.is_empty() {
                    &body.username
                } else {
                    &body.display_name
                };
                let aff = auth::random_string(8);
                let id = users::insert(
                    c,
                    &NewUser {
                        username: &body.username,
                        password: &hash,
                        display_name: display,
                        role: role.as_i32(),
                        status: UserStatus::Enabled.as_i32(),
                        email: &body.email,
                        quota: body.quota,
                        group_name: &group,
                        aff_code: Some(&aff),
                        inviter_id: 0,
                        created_at: t,
                        updated_at: t,
                    },
                )?;
                let text = format!(
                    "user created by administrator {} (id {})",
                    me.username, me.id
                );
                logs::record(
                    c,
                    LogType::Manage,
                    id,
                    &body.username,
                    body.quota,
                    &text,
                    &json!({"event": "user_created", "operator": me.username, "operator_id": me.id, "remark": body.remark}).to_string(),
                )?;
                Ok(users::find(c, id)?)
            })
        })
        .await?;
    Ok(HttpResponse::Created()
        .json(json!({"success": true, "message": "", "data": user_json(&user)})))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "UserUpdateBody")]
pub struct UpdateBody {
    id: i64,
    username: Option<String>,
    display_name: Option<String>,
    password: Option<String>,
    email: Option<String>,
    group: Option<String>,
}

/// `PUT /api/user {id, ...}`: edits another user's profile. Quota changes go through
/// `POST /api/user/quota/{id}` (with a remark and a log); roles and status through `manage`.
pub async fn update(
    state: web::Data<AppState>,
    AdminUser(me): AdminUser,
    Body(body): Body<UpdateBody>,
) -> ApiResult<HttpResponse> {
    let password = check_profile_edit(
        body.username.as_deref(),
        body.display_name.as_deref(),
        body.password,
    )?;
    if let Some(e) = body.email.as_deref().filter(|e| !e.is_empty()) {
        validate::email(e)?;
    }
    if let Some(g) = &body.group {
        validate::group_symbol(g)?;
    }
    let cost = state.config.bcrypt_cost;
    let user = state
        .db(move |c| {
            let target = load_user(c, body.id)?;
            check_outranks(&me, &target)?;
            switchboard_store::transaction(c, |c| {
                let mut ch = UserChangeset {
                    display_name: body.display_name,
                    ..Default::default()
                };
                if let Some(u) = body.username.filter(|u| *u != target.username) {
                    check_username_free(c, &u, target.id)?;
                    ch.username = Some(u);
                }
                if let Some(e) = body.email.filter(|e| *e != target.email) {
                    check_email_free(c, &e, target.id)?;
                    ch.email = Some(e);
                }
                if let Some(g) = body.group.filter(|g| *g != target.group_name) {
                    if !group_exists(c, &g)? {
                        return Err(ApiError::bad_request(
                            ErrorCode::UnknownGroup,
                            format!("group {g:?} does not exist or is disabled"),
                        ));
                    }
                    ch.group_name = Some(g);
                }
                if let Some(p) = &password {
                    ch.password = Some(auth::hash_password(p, cost)?);
                }
                users::update(c, target.id, &ch)?;
                if password.is_some() {
                    sessions::delete_for_user(c, target.id)?;
                    users::set_access_token_hash(c, target.id, None)?;
                }
                load_user(c, target.id)
            })
        })
        .await?;
    state.relay.forget_user(user.id);
    Ok(ok(user_json(&user)))
}

pub async fn delete(
    state: web::Data<AppState>,
    AdminUser(me): AdminUser,
    id: web::Path<i64>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    crate::relay::flush_ledger(&state).await?;
    state
        .db(move |c| apply_manage(c, &me, id, ManageAction::Delete))
        .await?;
    state.relay.forget_user(id);
    Ok(ok_message("user deleted"))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ManageBody {
    id: Option<i64>,
    username: Option<String>,
    action: ManageAction,
}

/// `POST /api/user/manage {id | username, action}` with action enable, disable, delete, promote
/// or demote. Returns the user's new role and status.
pub async fn manage(
    state: web::Data<AppState>,
    AdminUser(me): AdminUser,
    Body(body): Body<ManageBody>,
) -> ApiResult<HttpResponse> {
    let action = body.action;
    if action == ManageAction::Delete {
        crate::relay::flush_ledger(&state).await?;
    }
    let result = state
        .db(move |c| {
            let id = match (body.id, body.username) {
                (Some(id), _) => id,
                (None, Some(name)) if !name.is_empty() => {
                    found_or(users::find_by_username(c, &name), user_not_found)?.id
                }
                _ => {
                    return Err(ApiError::bad_request(
                        ErrorCode::Required,
                        "id or username is required",
                    ))
                }
            };
            apply_manage(c, &me, id, action)?;
            if action == ManageAction::Delete {
                return Ok(json!({"id": id, "deleted": true}));
            }
            let u = load_user(c, id)?;
            Ok(json!({"id": u.id, "role": u.role, "status": u.status}))
        })
        .await?;
    if let Some(id) = result["id"].as_i64() {
        state.relay.forget_user(id);
    }
    Ok(ok(result))
}

fn apply_manage(c: &mut DbConn, me: &CurrentUser, id: i64, action: ManageAction) -> ApiResult<()> {
    let target = load_user(c, id)?;
    may_manage(me.role, Role::from_stored(target.role), action).map_err(denied)?;
    switchboard_store::transaction(c, |c| {
        let ch = match action {
            ManageAction::Enable => UserChangeset {
                status: Some(UserStatus::Enabled.as_i32()),
                ..Default::default()
            },
            ManageAction::Disable => UserChangeset {
                status: Some(UserStatus::Disabled.as_i32()),
                ..Default::default()
            },
            ManageAction::Promote => UserChangeset {
                role: Some(Role::Admin.as_i32()),
                ..Default::default()
            },
            ManageAction::Demote => UserChangeset {
                role: Some(Role::Common.as_i32()),
                ..Default::default()
            },
            ManageAction::Delete => {
                sessions::delete_for_user(c, id)?;
                tokens::delete_for_user(c, id)?;
                users::delete(c, id)?;
                logs::record(
                    c,
                    LogType::Manage,
                    id,
                    &target.username,
                    0,
                    &format!(
                        "user deleted by administrator {} (id {})",
                        me.username, me.id
                    ),
                    &json!({"event": "user_deleted", "operator": me.username, "operator_id": me.id}).to_string(),
                )?;
                return Ok(());
            }
        };
        users::update(c, id, &ch)?;
        if action == ManageAction::Disable {
            sessions::delete_for_user(c, id)?;
        }
        let event = match action {
            ManageAction::Enable => "user_enabled",
            ManageAction::Disable => "user_disabled",
            ManageAction::Promote => "user_promoted",
            ManageAction::Demote => "user_demoted",
            ManageAction::Delete => "user_deleted",
        };
        let verb = match action {
            ManageAction::Enable => "enabled",
            ManageAction::Disable => "disabled",
            ManageAction::Promote => "promoted to administrator",
            ManageAction::Demote => "demoted to user",
            ManageAction::Delete => "deleted",
        };
        logs::record(
            c,
            LogType::Manage,
            id,
            &target.username,
            0,
            &format!(
                "user {verb} by administrator {} (id {})",
                me.username, me.id
            ),
            &json!({"event": event, "operator": me.username, "operator_id": me.id}).to_string(),
        )?;
        Ok(())
    })
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuotaBody {
    /// The change: positive adds, negative deducts.
    quota: i64,
    #[serde(default)]
    remark: String,
}

/// `POST /api/user/quota/{id} {quota, remark}`: adds or deducts quota with a remark, never
/// deducting more than the balance, and writes a management log in the same transaction.
pub async fn change_quota(
    state: web::Data<AppState>,
    AdminUser(me): AdminUser,
    id: web::Path<i64>,
    Body(body): Body<QuotaBody>,
) -> ApiResult<HttpResponse> {
    let id = id.into_inner();
    if body.quota == i64::MIN {
        return Err(ApiError::bad_request(
            ErrorCode::InvalidQuota,
            "the quota change is out of range",
        ));
    }
    if body.quota == 0 {
        return Err(ApiError::bad_request(
            ErrorCode::Required,
            "the quota change cannot be empty or zero",
        ));
    }
    if body.remark.chars().count() > 255 {
        return Err(ApiError::bad_request(
            ErrorCode::TooLong,
            "remark must be at most 255 characters",
        ));
    }
    let per_unit = state.settings.site().quota_per_unit;
    if body.quota < 0 {
        // The ledger knows what requests in flight hold and what is not written yet: a
        // deduction may take only what is really free.
        let available = state
            .relay
            .ledger
            .user_available(id)
            .await
            .map_err(ApiError::internal)?;
        if let Some(a) = available.filter(|a| *a < -body.quota) {
            return Err(ApiError::bad_request(
                ErrorCode::InsufficientBalance,
                format!(
                    "cannot deduct {} quota: the user can spend only {} right now (the rest is unwritten or held by requests in progress)",
                    -body.quota,
                    a.max(0)
                ),
            ));
        }
    }
    let user = state
        .db(move |c| {
            let target = load_user(c, id)?;
            if me.role != Role::Root && me.role <= Role::from_stored(target.role) {
                return Err(ApiError::forbidden(
                    ErrorCode::Forbidden,
                    "you can only change the quota of users with a lower role than yours",
                ));
            }
            switchboard_store::transaction(c, |c| {
                if !users::add_quota(c, id, body.quota)? {
                    return Err(ApiError::bad_request(
                        ErrorCode::InsufficientBalance,
                        format!(
                            "cannot deduct {} quota: the user's balance is only {}",
                            -body.quota, target.quota
                        ),
                    ));
                }
                let sign = if body.quota > 0 { "added" } else { "deducted" };
                let text = format!(
                    "administrator {} (id {}) {sign} {} ({}){}",
                    me.username,
                    me.id,
                    body.quota.abs(),
                    quota::display(body.quota.abs(), per_unit, true),
                    if body.remark.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", body.remark)
                    }
                );
                logs::record(
                    c,
                    LogType::Manage,
                    id,
                    &target.username,
                    body.quota,
                    &text,
                    &json!({"event": "quota_changed", "operator": me.username, "operator_id": me.id, "remark": body.remark}).to_string(),
                )?;
                load_user(c, id)
            })
        })
        .await?;
    // Committed: the relay's ledger sees the new balance at once.
    state.relay.ledger.credit_user(id, body.quota).await;
    Ok(ok(user_json(&user)))
}
