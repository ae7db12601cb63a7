// The vault holding each site's Smartsheet token (RBAC mode: access only through role assignments,
// no access policies). The app reads the tokens through Key Vault references in its app settings.
import { tokenSecretName } from 'names.bicep'

param name string
param location string
param tags object = {}
@description('The sites as SITES lists them; one secret per distinct tokenSetting.')
param sites array
@secure()
@description('Tokens by token setting name; a token setting absent here gets no secret from the template (write it with az keyvault secret set).')
param smartsheetTokens object

// union() keeps each name once: sites may share a token.
var tokenSettings = union(map(sites, site => string(site.tokenSetting)), [])
var tokenSettingsGiven = filter(tokenSettings, tokenSetting => contains(smartsheetTokens, tokenSetting))

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    tenantId: tenant().tenantId
    sku: {
      family: 'A'
      name: 'standard'
    }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: 90
    publicNetworkAccess: 'Enabled'
  }
}

resource tokenSecrets 'Microsoft.KeyVault/vaults/secrets@2023-07-01' = [
  for tokenSetting in tokenSettingsGiven: {
    parent: vault
    name: tokenSecretName(tokenSetting)
    properties: {
      value: smartsheetTokens[tokenSetting]
      contentType: 'Smartsheet API access token (${tokenSetting})'
    }
  }
]

output name string = vault.name
output uri string = vault.properties.vaultUri
