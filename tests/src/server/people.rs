//! Who uses a test server: users' tokens, an admin's, a browser's login.

use serde_json::json;

use super::TestServer;

impl TestServer {
    /// A new personal access token for user `name` (created if new).
    ///
    /// # Panics
    /// On database errors.
    pub async fn token(&self, name: &str) -> String {
        clarify_server::auth::tokens::create(&self.db, name, None)
            .await
            .expect("create token")
            .0
    }

    /// A personal access token of the admin `name` (`clarify token create
    /// --admin`): the audit and the Activity figures see every workspace.
    pub async fn admin_token(&self, name: &str) -> String {
        let (token, record) = clarify_server::auth::tokens::create(&self.db, name, None)
            .await
            .expect("create token");
        let id = record.user_id;
        self.db
            .write(async |c| clarify_server::db::users::make_admin(c, &id).await)
            .await
            .expect("make an admin");
        token
    }

    /// Logs a browser in with `token`; returns its `Set-Cookie` header.
    ///
    /// # Panics
    /// When the login is refused.
    pub async fn login(&self, token: &str) -> String {
        let login = self
            .client
            .post(self.url("/api/v1/auth/login"))
            .json(&json!({ "token": token }))
            .send()
            .await
            .expect("log in");
        assert_eq!(login.status(), 200, "log in");
        login.headers()["set-cookie"]
            .to_str()
            .expect("a cookie")
            .to_owned()
    }
}
