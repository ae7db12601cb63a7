// Sheetwright on Azure: a Flex Consumption Function App (Node 22) that reaches its storage account,
// Key Vault and Application Insights with one user-assigned identity and no key. The layout follows
// Microsoft's Durable Functions azd quickstart (Azure-Samples/durable-functions-quickstart-typescript-azd);
// docs/deploy.md walks through a first deploy, test/infra/ checks this template.
targetScope = 'subscription'

@minLength(1)
@maxLength(64)
@description('Name of the azd environment; seeds the short unique token in every resource name.')
param environmentName string

@minLength(1)
@description('Region of every resource. It must offer Flex Consumption: az functionapp list-flexconsumption-locations')
@metadata({
  azd: {
    type: 'location'
  }
})
param location string

@description('Object id of the person deploying (azd sets AZURE_PRINCIPAL_ID). Used only to open the Durable Task Scheduler dashboard when that backend is chosen; leave empty for none.')
param principalId string = ''

@allowed([
  'User'
  'ServicePrincipal'
])
@description('What principalId is: a person (azd up at a desk) or a service principal (azd in a pipeline).')
param principalType string = 'User'

@minLength(1)
@description('The customer sites, exactly as the app setting SITES lists them: [{"name","intakeSheetId","templateFolderId","productsFolderId","filingIndexSheetId","tokenSetting"}]. Each tokenSetting becomes an app setting holding a Key Vault reference to that site\'s token.')
param sites array

@secure()
@description('Smartsheet tokens by token setting name, e.g. {"SMARTSHEET_TOKEN_ACME":"..."}; each is written to the Key Vault. {} to write the secrets yourself (az keyvault secret set).')
param smartsheetTokens object

@description('Smartsheet API base URL: https://api.smartsheet.com/2.0/, https://api.smartsheet.eu/2.0/ or https://api.smartsheetgov.com/2.0/')
param smartsheetBaseUrl string = 'https://api.smartsheet.com/2.0/'

@minLength(3)
@maxLength(45)
@description('Durable Functions task hub (letters and digits): TASK_HUB_NAME, and the scheduler\'s task hub when that backend is chosen.')
param taskHubName string = 'Sheetwright'

@allowed([
  'azureStorage'
  'durableTaskScheduler'
])
@description('Durable Functions backend: the Azure Storage provider in the app\'s own storage account, or a Durable Task Scheduler. host.json must match: infra/scripts/hostForBackend.mjs writes it at packaging time.')
param durableBackend string = 'azureStorage'

@description('Durable Task Scheduler SKU (the quickstart\'s default).')
param dtsSkuName string = 'Consumption'

@minLength(3)
@description('Email address the Azure Monitor alerts (park, site failure, recovery spike) are sent to.')
param alertEmail string

@description('Optional webhook (Teams Workflows, PagerDuty, Logic App...) the Action Group also calls; empty for none.')
param alertActionWebhookUrl string = ''

@description('Optional ALERT_WEBHOOK_URL of the app itself (its own park and site alerts); empty for none.')
param appAlertWebhookUrl string = ''

@minValue(1)
@description('Recoveries in one hour that raise the recovery-spike alert.')
param recoverySpikeThreshold int = 10

var abbrs = loadJsonContent('./abbreviations.json')
var resourceToken = toLower(uniqueString(subscription().id, environmentName, location))
var tags = { 'azd-env-name': environmentName }
var functionAppName = '${abbrs.webSitesFunctions}api-${resourceToken}'
var deploymentStorageContainerName = 'app-package-${take(functionAppName, 32)}-${take(toLower(uniqueString(functionAppName, resourceToken)), 7)}'
var useScheduler = durableBackend == 'durableTaskScheduler'

resource rg 'Microsoft.Resources/resourceGroups@2021-04-01' = {
  name: '${abbrs.resourcesResourceGroups}${environmentName}'
  location: location
  tags: tags
}

// The app's only identity: storage, Key Vault, App Insights ingestion and the scheduler all know it by its roles (app/rbac.bicep).
module apiUserAssignedIdentity 'br/public:avm/res/managed-identity/user-assigned-identity:0.4.1' = {
  name: 'apiUserAssignedIdentity'
  scope: rg
  params: {
    location: location
    tags: tags
    name: '${abbrs.managedIdentityUserAssignedIdentities}api-${resourceToken}'
  }
}

module appServicePlan 'br/public:avm/res/web/serverfarm:0.1.1' = {
  name: 'appserviceplan'
  scope: rg
  params: {
    name: '${abbrs.webServerFarms}${resourceToken}'
    sku: {
      name: 'FC1'
      tier: 'FlexConsumption'
    }
    reserved: true
    location: location
    tags: tags
  }
}

module storage 'br/public:avm/res/storage/storage-account:0.8.3' = {
  name: 'storage'
  scope: rg
  params: {
    name: '${abbrs.storageStorageAccounts}${resourceToken}'
    allowBlobPublicAccess: false
    allowSharedKeyAccess: false
    dnsEndpointType: 'Standard'
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      defaultAction: 'Allow'
      bypass: 'AzureServices'
    }
    blobServices: {
      containers: [{ name: deploymentStorageContainerName }]
    }
    minimumTlsVersion: 'TLS1_2'
    location: location
    tags: tags
  }
}

module logAnalytics 'br/public:avm/res/operational-insights/workspace:0.11.1' = {
  name: '${uniqueString(deployment().name, location)}-loganalytics'
  scope: rg
  params: {
    name: '${abbrs.operationalInsightsWorkspaces}${resourceToken}'
    location: location
    tags: tags
    dataRetention: 30
  }
}

// disableLocalAuth: ingestion only with the identity (APPLICATIONINSIGHTS_AUTHENTICATION_STRING), never the instrumentation key alone.
module monitoring 'br/public:avm/res/insights/component:0.6.0' = {
  name: '${uniqueString(deployment().name, location)}-appinsights'
  scope: rg
  params: {
    name: '${abbrs.insightsComponents}${resourceToken}'
    location: location
    tags: tags
    workspaceResourceId: logAnalytics.outputs.resourceId
    disableLocalAuth: true
  }
}

module keyVault 'app/keyvault.bicep' = {
  name: 'keyVault'
  scope: rg
  params: {
    name: '${abbrs.keyVaultVaults}${resourceToken}'
    location: location
    tags: tags
    sites: sites
    smartsheetTokens: smartsheetTokens
  }
}

module rbac 'app/rbac.bicep' = {
  name: 'rbacAssignments'
  scope: rg
  params: {
    storageAccountName: storage.outputs.name
    appInsightsName: monitoring.outputs.name
    keyVaultName: keyVault.outputs.name
    managedIdentityPrincipalId: apiUserAssignedIdentity.outputs.principalId
  }
}

module dts 'app/dts.bicep' = if (useScheduler) {
  name: 'dtsResource'
  scope: rg
  params: {
    name: '${abbrs.durableTaskSchedulers}${resourceToken}'
    taskHubName: taskHubName
    location: location
    tags: tags
    skuName: dtsSkuName
    managedIdentityPrincipalId: apiUserAssignedIdentity.outputs.principalId
    dashboardPrincipalId: principalId
    dashboardPrincipalType: principalType
  }
}

module api 'app/api.bicep' = {
  name: 'api'
  scope: rg
  params: {
    name: functionAppName
    location: location
    tags: tags
    applicationInsightsName: monitoring.outputs.name
    appServicePlanId: appServicePlan.outputs.resourceId
    storageAccountName: storage.outputs.name
    deploymentStorageContainerName: deploymentStorageContainerName
    identityId: apiUserAssignedIdentity.outputs.resourceId
    identityClientId: apiUserAssignedIdentity.outputs.clientId
    keyVaultUri: keyVault.outputs.uri
    sites: sites
    smartsheetBaseUrl: smartsheetBaseUrl
    taskHubName: taskHubName
    appAlertWebhookUrl: appAlertWebhookUrl
    durableTaskSchedulerEndpoint: useScheduler ? dts.outputs.endpoint : ''
  }
  dependsOn: [
    rbac
  ]
}

module alerts 'app/alerts.bicep' = {
  name: 'alerts'
  scope: rg
  params: {
    namePrefix: resourceToken
    location: location
    tags: tags
    applicationInsightsName: monitoring.outputs.name
    alertEmail: alertEmail
    alertActionWebhookUrl: alertActionWebhookUrl
    recoverySpikeThreshold: recoverySpikeThreshold
  }
}

output AZURE_LOCATION string = location
output AZURE_TENANT_ID string = tenant().tenantId
output AZURE_RESOURCE_GROUP string = rg.name
output SERVICE_API_NAME string = api.outputs.SERVICE_API_NAME
output AZURE_FUNCTION_NAME string = api.outputs.SERVICE_API_NAME
output AZURE_KEY_VAULT_NAME string = keyVault.outputs.name
output AZURE_STORAGE_ACCOUNT_NAME string = storage.outputs.name
output DURABLE_TASK_SCHEDULER_ENDPOINT string = useScheduler ? dts.outputs.endpoint : ''
