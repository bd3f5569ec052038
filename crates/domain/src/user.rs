//! Roles and statuses of users (spec sections 3, 4 and 6).

use serde::{Deserialize, Serialize};

/// A user's role number as stored. Admin is any role >= 10, root is 100.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(into = "i32", try_from = "i32")]
pub enum Role {
    Common,
    Admin,
    Root,
}

impl Role {
    pub const fn as_i32(self) -> i32 {
        match self {
            Role::Common => 1,
            Role::Admin => 10,
            Role::Root => 100,
        }
    }

    /// Maps a stored role number onto the role it grants: anything from 100 is root, from 10 admin,
    /// everything else a common user. Unknown numbers never grant more than they reach.
    pub const fn from_stored(n: i32) -> Role {
        if n >= 100 {
            Role::Root
        } else if n >= 10 {
            Role::Admin
        } else {
            Role::Common
        }
    }

    pub const fn is_admin(self) -> bool {
        matches!(self, Role::Admin | Role::Root)
    }
}

impl From<Role> for i32 {
    fn from(r: Role) -> i32 {
        r.as_i32()
    }
}

impl TryFrom<i32> for Role {
    type Error = String;
    fn try_from(n: i32) -> Result<Self, Self::Error> {
        match n {
            1 => Ok(Role::Common),
            10 => Ok(Role::Admin),
            100 => Ok(Role::Root),
            other => Err(format!("unknown role {other}")),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "i32", try_from = "i32")]
pub enum UserStatus {
    Enabled,
    Disabled,
}

impl UserStatus {
    pub const fn as_i32(self) -> i32 {
        match self {
            UserStatus::Enabled => 1,
            UserStatus::Disabled => 2,
        }
    }
}

impl From<UserStatus> for i32 {
    fn from(s: UserStatus) -> i32 {
        s.as_i32()
    }
}

impl TryFrom<i32> for UserStatus {
    type Error = String;
    fn try_from(n: i32) -> Result<Self, Self::Error> {
        match n {
            1 => Ok(UserStatus::Enabled),
            2 => Ok(UserStatus::Disabled),
            other => Err(format!("unknown user status {other}")),
        }
    }
}

/// What an administrator may do to another user through `/api/user/manage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ManageAction {
    Enable,
    Disable,
    Delete,
    Promote,
    Demote,
}

/// Why an actor may not act on a target user; `None` from [`may_manage`] means it may.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ManageDenied {
    /// Only a user of a strictly higher role may change another user (an admin cannot change an
    /// admin or root).
    TargetNotLower,
    /// Only root makes or unmakes administrators.
    OnlyRootChangesAdmins,
    /// Root cannot be demoted, disabled or deleted.
    RootIsProtected,
    /// Promotion goes up to admin only; demotion goes down to common only.
    NoSuchStep,
}

/// The permission rule for user management, kept in one place: an actor may act on a target only
/// when the actor's role is strictly higher; promote/demote are root's alone; root itself is
/// never disabled, deleted or demoted.
pub fn may_manage(actor: Role, target: Role, action: ManageAction) -> Result<(), ManageDenied> {
    if target == Role::Root {
        return Err(ManageDenied::RootIsProtected);
    }
    if actor <= target {
        return Err(ManageDenied::TargetNotLower);
    }
    match action {
        ManageAction::Promote | ManageAction::Demote if actor != Role::Root => {
            Err(ManageDenied::OnlyRootChangesAdmins)
        }
        ManageAction::Promote if target != Role::Common => Err(ManageDenied::NoSuchStep),
        ManageAction::Demote if target != Role::Admin => Err(ManageDenied::NoSuchStep),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_roles_never_grant_more_than_they_reach() {
        assert_eq!(Role::from_stored(0), Role::Common);
        assert_eq!(Role::from_stored(9), Role::Common);
        assert_eq!(Role::from_stored(10), Role::Admin);
        assert_eq!(Role::from_stored(99), Role::Admin);
        assert_eq!(Role::from_stored(100), Role::Root);
        assert!(Role::Admin.is_admin() && Role::Root.is_admin() && !Role::Common.is_admin());
    }

    #[test]
    fn management_rules() {
        use ManageAction::*;
        assert_eq!(may_manage(Role::Admin, Role::Common, Disable), Ok(()));
        assert_eq!(
            may_manage(Role::Admin, Role::Admin, Disable),
            Err(ManageDenied::TargetNotLower)
        );
        assert_eq!(
            may_manage(Role::Admin, Role::Root, Disable),
            Err(ManageDenied::RootIsProtected)
        );
        assert_eq!(
            may_manage(Role::Admin, Role::Common, Promote),
            Err(ManageDenied::OnlyRootChangesAdmins)
        );
        assert_eq!(may_manage(Role::Root, Role::Common, Promote), Ok(()));
        assert_eq!(
            may_manage(Role::Root, Role::Admin, Promote),
            Err(ManageDenied::NoSuchStep)
        );
        assert_eq!(may_manage(Role::Root, Role::Admin, Demote), Ok(()));
        assert_eq!(
            may_manage(Role::Root, Role::Common, Demote),
            Err(ManageDenied::NoSuchStep)
        );
        assert_eq!(
            may_manage(Role::Root, Role::Root, Delete),
            Err(ManageDenied::RootIsProtected)
        );
        assert_eq!(
            may_manage(Role::Common, Role::Common, Delete),
            Err(ManageDenied::TargetNotLower)
        );
    }
}
