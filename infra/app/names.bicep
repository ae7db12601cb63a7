// Names more than one module derives the same way.

@export()
@description('The Key Vault secret holding the token of an app setting such as SMARTSHEET_TOKEN_ACME: smartsheet-token-acme.')
func tokenSecretName(tokenSetting string) string => toLower(replace(tokenSetting, '_', '-'))
